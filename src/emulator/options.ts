import { z } from "zod";
import { headerSecret, listenHost, MAX_TIMER_MS } from "../config.ts";

/**
 * How an emulator is configured (the `coldsync emulator` flags and
 * `startEmulator()`), and the shapes of its admin answers. The settings in
 * `runtimeSettings` can also be changed while it runs (POST /admin/settings).
 */

export const faultMode = z.enum(["none", "mild", "hostile"]);
export type FaultMode = z.infer<typeof faultMode>;

export const listOrder = z.enum(["asc", "desc", "shuffle"]);
export type ListOrder = z.infer<typeof listOrder>;

export const workspacesShape = z.enum(["bare", "envelope"]);

/** How far answers deviate from the spec, the way real APIs do ("Drift" in src/emulator/README.md). */
export const driftMode = z.enum(["none", "mild", "wild"]);
export type DriftMode = z.infer<typeof driftMode>;

/** Deviations of single records, applied while answers are rendered. */
export const RECORD_DRIFT_KINDS = ["null", "missing", "numeric-string", "boolean-form", "datetime-form", "unknown-enum", "extra-field"] as const;
export type RecordDriftKind = (typeof RECORD_DRIFT_KINDS)[number];
/** Deviations of whole pages of the paginated listings. */
export const PAGE_DRIFT_KINDS = ["page-cap", "total-off", "page-repeat", "total-missing"] as const;
export type PageDriftKind = (typeof PAGE_DRIFT_KINDS)[number];
/**
 * The page kinds in play when none are named. `total-missing` is in play only when named: a sync cannot
 * prove a walk without a total whole, so it deletes only after two walks, and a run compared with the
 * ground truth (tests, benchmarks) would no longer be whole after one run.
 */
export const DEFAULT_PAGE_DRIFT_KINDS: readonly PageDriftKind[] = ["page-cap", "total-off", "page-repeat"];

export const driftKind = z.enum([...RECORD_DRIFT_KINDS, ...PAGE_DRIFT_KINDS]);
export type DriftKind = z.infer<typeof driftKind>;

/** How the simulated clock moves: only with advance() (`manual`), or also with real time (`wall`, clock.ts). */
export const clockMode = z.enum(["manual", "wall"]);
export type ClockMode = z.infer<typeof clockMode>;

export const seedScale = z.enum(["small", "medium", "large", "busy"]);
export type SeedScale = z.infer<typeof seedScale>;

/** A delay the emulator waits with a timer. */
const delayMs = z.number().int().min(0).max(MAX_TIMER_MS);

/** Within what a double holds exactly: the seed reproduces its data only then. */
export const seedNumber = z.number().int();

export const runtimeSettings = z.object({
  order: listOrder.default("asc"),
  workspaces: workspacesShape.default("bare"),
  /** Requests per second per API key; 0 means unlimited. */
  rateLimit: z.number().int().min(0).default(0),
  /** Added to every API answer. */
  latencyMs: delayMs.default(0),
  faults: faultMode.default("none"),
  /** How long a "slow answer" fault holds the response. */
  slowMs: delayMs.default(1_500),
  drift: driftMode.default("none"),
  /** The drift kinds in play; when absent, every kind but the opt-in `total-missing` (DEFAULT_PAGE_DRIFT_KINDS). */
  driftKinds: z.array(driftKind).optional(),
  /** `wall`: simulated time also elapses at real speed (clock.ts). */
  clock: clockMode.default("manual"),
});
export type RuntimeSettings = z.infer<typeof runtimeSettings>;

export const emulatorOptions = runtimeSettings.extend({
  /** Read by the rule COLDSYNC_HTTP_HOST is. */
  host: listenHost.default("127.0.0.1"),
  /** 0 picks a free port. */
  port: z.number().int().min(0).max(65_535).default(0),
  seed: seedNumber.default(1),
  /** One account per key; each read by the rule COLDSYNC_API_KEY is (an HTTP header carries it). */
  apiKeys: z
    .array(headerSecret)
    .min(1)
    .refine((keys) => new Set(keys).size === keys.length, "must not name a key twice")
    .default(["demo"]),
  scale: seedScale.default("small"),
  /** Serve /admin/ routes (simulated clock, ground truth, settings). */
  admin: z.boolean().default(false),
});
export type EmulatorOptions = z.infer<typeof emulatorOptions>;
export type EmulatorOptionsInput = z.input<typeof emulatorOptions>;

/** Entities of the ground truth, named after the warehouse tables they land in. */
export const TRUTH_ENTITIES = [
  "workspaces",
  "domains",
  "contact_lists",
  "campaigns",
  "campaign_sending_domains",
  "email_sequences",
  "leads",
  "contacts",
  "schedules",
  "replies",
  "link_clicks",
  "email_opens",
] as const;
export type TruthEntity = (typeof TRUTH_ENTITIES)[number];

/**
 * What one account holds right now. Keys are strings: ids and uids as they
 * are; composite keys joined with "|" (link_clicks: schedule_id|link|clicked_on,
 * email_opens: schedule_id|opened_on, campaign_sending_domains: campaign_uid|domain_id).
 * email_sequences lists the sequences a client can discover, i.e. those
 * referenced by at least one schedule's email_data.
 */
export interface GroundTruth {
  now: string;
  counts: Record<TruthEntity, number>;
  keys: Record<TruthEntity, string[]>;
}

/**
 * One deviation of a record as served (see RunningEmulator.driftOf): where, which kind, and the value
 * sent (absent for `missing`). Paths read like `schedules[0].replies[1].reply_classification`.
 */
export interface DriftEntry {
  path: string;
  kind: RecordDriftKind;
  value?: unknown;
}

export interface AdvanceReport {
  now: string;
  /** How many records of each entity were created or changed by this step. */
  created: Partial<Record<TruthEntity, number>>;
  changed: Partial<Record<TruthEntity, number>>;
}
