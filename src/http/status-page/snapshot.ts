import type { Kysely } from "kysely";
import { fieldIssueCounts, rejectedCounts, type FieldIssueCount, type RejectedCount } from "../../sync/status.ts";
import { lastVerification, type LastVerification } from "../../sync/verifications.ts";
import type { Database } from "../../warehouse/database.ts";
import { probe, redisTakesWrites, warehouseTakesWrites } from "../health.ts";
import { fieldIssueRowsPerCampaign, warehouseHealth, type WarehouseHealth } from "./campaign-health.ts";
import { engagement, type Engagement } from "./engagement.ts";
import { fleetStatus, type FleetSources, type FleetStatus } from "./fleet.ts";
import type { Cadence } from "../../queue/cadence.ts";
import type { LastUpstreamAnswer } from "./last-answer.ts";
import { PeriodicRead, type Section } from "./periodic-read.ts";
import { perShape } from "./per-shape.ts";
import { recentRuns, requestsPerMinute, type MinuteOfRequests, type RunBar } from "./runs.ts";
import { withDeadline } from "../deadline.ts";

/**
 * Everything the status page shows, read in one go: the page, its refreshes
 * and /api/status all render the same snapshot. Each section is read on its
 * own with a deadline, so a dead Redis or a slow warehouse costs its panel,
 * not the page.
 */

export interface StatusSources {
  account: string;
  db: Kysely<Database>;
  cadence: Cadence;
  /** COLDSYNC_RATE_LIMIT: the account's requests per second. */
  rateLimitPerSecond: number;
  upstream: { last(): LastUpstreamAnswer };
  /** The worker's queues; undefined where there is no fleet (`coldsync demo --serve`). */
  fleet?: FleetSources;
  /** What "now" is when judging lag and drawing the last hour; tests pin it. */
  clock?: () => Date;
}

export interface SnapshotShape {
  /** Bars in the runs timeline. */
  runs: number;
  /** Days in the engagement chart. */
  days: number;
}

export const DEFAULT_SHAPE: SnapshotShape = { runs: 40, days: 30 };
const REQUEST_MINUTES = 60;

export type { Section } from "./periodic-read.ts";

export interface DataQuality {
  rejected: RejectedCount[];
  fieldIssues: FieldIssueCount[];
  /** Live rows with a field issue, per campaign uid. */
  fieldIssueRowsPerCampaign: Record<string, number>;
}

export interface StatusSnapshot {
  generatedAt: Date;
  account: string;
  shape: SnapshotShape;
  cadence: Cadence;
  dependencies: {
    warehouse: string;
    /** null: this process has no Redis (demo). */
    redis: string | null;
    upstream: LastUpstreamAnswer;
  };
  /** null: no queues here (demo). */
  fleet: Section<FleetStatus> | null;
  warehouse: Section<WarehouseHealth>;
  runs: Section<RunBar[]>;
  requests: Section<{ perMinute: MinuteOfRequests[]; budgetPerMinute: number }>;
  engagement: Section<Engagement>;
  quality: Section<DataQuality>;
  /** The last `coldsync verify` (or the worker's periodic one); null: none ran. */
  verification: Section<LastVerification | null>;
}

const SECTION_TIMEOUT_MS = 5_000;
/** The heavy reads run in the background and may take longer; a page never waits for them but the first time. */
const HEAVY_TIMEOUT_MS = 60_000;

async function section<T>(work: () => Promise<T>, timeoutMs = SECTION_TIMEOUT_MS): Promise<Section<T>> {
  try {
    return { ok: true, value: await withDeadline(work(), timeoutMs) };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

/** The sections that scan whole tables: engagement and data quality. */
export interface HeavyReads {
  engagement(days: number): Promise<Section<Engagement>>;
  quality(): Promise<Section<DataQuality>>;
}

/** Reads them on every call; for tests and one-off reads. */
function directHeavyReads(sources: StatusSources): HeavyReads {
  const { db, account } = sources;
  return {
    engagement: (days) => section(() => engagement(db, account, days), HEAVY_TIMEOUT_MS),
    quality: () =>
      section(async () => {
        const [rejected, fieldIssues, fieldIssueRows] = await Promise.all([rejectedCounts(db, account), fieldIssueCounts(db, account), fieldIssueRowsPerCampaign(db, account)]);
        return { rejected, fieldIssues, fieldIssueRowsPerCampaign: fieldIssueRows };
      }, HEAVY_TIMEOUT_MS),
  };
}

/** Reads them at most once per `maxAgeMs` (each day window on its own), in the background (see PeriodicRead). */
export function periodicHeavyReads(sources: StatusSources, maxAgeMs: number, firstWaitMs: number): HeavyReads {
  const direct = directHeavyReads(sources);
  const engagementOf = perShape((days) => new PeriodicRead(() => direct.engagement(Number(days)), maxAgeMs, firstWaitMs));
  const quality = new PeriodicRead(() => direct.quality(), maxAgeMs, firstWaitMs);
  return {
    engagement: (days) => engagementOf(String(days)).get(),
    quality: () => quality.get(),
  };
}

export async function collectStatus(
  sources: StatusSources,
  shape: SnapshotShape = DEFAULT_SHAPE,
  heavy: HeavyReads = directHeavyReads(sources),
): Promise<StatusSnapshot> {
  const now = sources.clock?.() ?? new Date();
  const { db, account, fleet } = sources;
  const health = section(() => warehouseHealth(db, account, sources.cadence, now));
  const [warehouse, redis, warehouseCheck, runs, requests, engaged, quality, verification, fleetSection] = await Promise.all([
    health,
    fleet ? probe(() => redisTakesWrites(fleet.redis, fleet.prefix), SECTION_TIMEOUT_MS) : Promise.resolve(null),
    probe(() => warehouseTakesWrites(db), SECTION_TIMEOUT_MS),
    section(() => recentRuns(db, account, shape.runs, now)),
    section(async () => ({
      perMinute: await requestsPerMinute(db, account, REQUEST_MINUTES, now),
      budgetPerMinute: sources.rateLimitPerSecond * 60,
    })),
    heavy.engagement(shape.days),
    heavy.quality(),
    section(async () => (await lastVerification(db, account)) ?? null),
    // Job links need the campaigns; without the warehouse the fleet panel still shows its counts.
    fleet
      ? health.then((read) => section(() => fleetStatus(fleet, read.ok ? read.value.campaigns.map((campaign) => campaign.uid) : [])))
      : Promise.resolve(null),
  ]);
  const { activeEveryMs, idleEveryMs, terminalEveryMs, discoverEveryMs, eventsEveryMs } = sources.cadence;
  return {
    generatedAt: now,
    account,
    shape,
    cadence: { activeEveryMs, idleEveryMs, terminalEveryMs, discoverEveryMs, eventsEveryMs },
    dependencies: { warehouse: warehouseCheck, redis, upstream: sources.upstream.last() },
    fleet: fleetSection,
    warehouse,
    runs,
    requests,
    engagement: engaged,
    quality,
    verification,
  };
}

/**
 * Reads at most once per `maxAgeMs`, and callers that arrive while a read is
 * running share it: ten open tabs refreshing every few seconds cost the
 * warehouse one read, not ten.
 */
export class SnapshotCache {
  #pending: Promise<StatusSnapshot> | undefined;
  #latest: { snapshot: StatusSnapshot; at: number } | undefined;

  constructor(
    private readonly read: () => Promise<StatusSnapshot>,
    private readonly maxAgeMs: number,
  ) {}

  get(): Promise<StatusSnapshot> {
    if (this.#latest && Date.now() - this.#latest.at < this.maxAgeMs) return Promise.resolve(this.#latest.snapshot);
    this.#pending ??= this.read()
      .then((snapshot) => {
        this.#latest = { snapshot, at: Date.now() };
        return snapshot;
      })
      .finally(() => {
        this.#pending = undefined;
      });
    return this.#pending;
  }
}
