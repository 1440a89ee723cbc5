import { isDeepStrictEqual } from "node:util";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RECORD_DRIFT_KINDS, type DriftKind, type EmulatorOptionsInput, type RecordDriftKind } from "../../src/emulator/options.ts";
import { startEmulator, type RunningEmulator } from "../../src/emulator/server.ts";
import { IncompleteWalkError } from "../../src/sync/run-paged.ts";
import { runFullSync, type RunSummary } from "../../src/sync/runs.ts";
import { PATHS } from "../../src/upstream/endpoints.ts";
import { useTestDatabase } from "../support/database.ts";
import {
  columnDifferences,
  extraFieldHome,
  fieldIssuesWithValues,
  instantOf,
  issuePaths,
  placedDeviations,
  readClean,
  readWarehouse,
  type PlacedDeviation,
  type Warehouse,
} from "../support/drift.ts";
import type { AccountSnapshot } from "../support/emulator.ts";
import { attachWarehouse, TEST_KEY, type SyncFixture } from "../support/sync.ts";
import { diffWithTruth, warehouseKeys } from "../support/truth.ts";

/**
 * The sync against an upstream that deviates from its document the way real
 * APIs do (issue 10): the emulator's drift, kind by kind and all together,
 * with and without hostile faults, in every listing order. Each drifted
 * warehouse is compared with the ground truth (keys) and, row by row and
 * column by column, with a warehouse synced from the clean rendering of the
 * same data: a column holds the clean value (a coerced one is the clean
 * one), or NULL or an unknown enum value, and then its row's `_field_issues`
 * names the field; every deviation served is named (or, for an extra field,
 * kept in `_extra`); nothing with a usable key is rejected.
 */

const databaseUrl = useTestDatabase("drift");
const PAGE_KINDS = ["page-cap", "total-off", "page-repeat"] as const satisfies readonly DriftKind[];
const EMULATOR: EmulatorOptionsInput = { seed: 5, scale: "small", apiKeys: [TEST_KEY], slowMs: 30 };

/** The column of its row a deviation's path stands for (a campaign's settings are columns of `campaigns`). */
const columnOf = (deviation: PlacedDeviation) => (deviation.table === "campaigns" ? deviation.path.replace(/^settings\./, "") : deviation.path);

/**
 * One drifted run, read back whole: its summary, its keys against the ground truth, its rejected records
 * and its live rows. The warehouse's connections are closed once it is read (PostgreSQL is shared), unless
 * the case needs another run.
 */
interface Case {
  emulator: RunningEmulator;
  summary: RunSummary;
  schema: string;
  keysDiff: ReturnType<typeof diffWithTruth>;
  rejected: { stream: string; reason: string }[];
  drifted: Warehouse;
  fixture?: SyncFixture;
}

async function driftedRun(emulator: RunningEmulator, schema: string, keepOpen = false): Promise<Case> {
  const fixture = await attachWarehouse(emulator, databaseUrl(), schema);
  try {
    let summary = await runFullSync(fixture.context());
    // Under hostile faults a listing can move during every walk a run allows (records arriving behind the
    // cursor each time): the run says so, failing that stream, and the next run reads it again, as the
    // worker's next cycle would.
    if (summary.failures.length > 0 && summary.failures.every((failure) => failure.error instanceof IncompleteWalkError)) summary = await runFullSync(fixture.context());
    const db = fixture.warehouse.db;
    const keysDiff = diffWithTruth(emulator.truth(TEST_KEY), await warehouseKeys(db));
    const rejected = await db.selectFrom("rejected_records").select(["stream", "reason"]).execute();
    const drifted = await readWarehouse(db, schema);
    return { emulator, summary, schema, keysDiff, rejected, drifted, fixture: keepOpen ? fixture : undefined };
  } finally {
    if (!keepOpen) await fixture.close();
  }
}

/** Keys equal to the truth, nothing rejected, the run succeeded. */
function expectPlacedInFull({ summary, keysDiff, rejected }: Case): void {
  expect(summary.failures.map((failure) => `${failure.stream}: ${failure.error.message}`)).toEqual([]);
  expect(summary.outcome).toBe("succeeded");
  expect(keysDiff).toEqual({});
  expect(rejected).toEqual([]);
}

/** Every column equal to the clean warehouse's, or NULL / the value as sent, and then named by an issue. */
function expectColumnsCleanOrNamed(drifted: Warehouse, clean: Warehouse, deviations: readonly PlacedDeviation[]): void {
  // What a reader cannot tell from data (a null where the spec allows one, an open set's new value) is stored as sent.
  const invisible = new Map<string, unknown[]>();
  for (const deviation of deviations.filter((item) => !item.visible && item.kind !== "extra-field")) {
    const id = `${deviation.table}|${deviation.key}|${columnOf(deviation)}`;
    invisible.set(id, [...(invisible.get(id) ?? []), deviation.value]);
  }
  const unexplained = columnDifferences(drifted, clean).filter((difference) => {
    // A field that arrived null or missing (raw null) is not stored: the row keeps what an earlier read wrote, which
    // under hostile faults may be older than the clean run's value (an open inserted between two reads of a schedule).
    if (difference.namedBy) return !(difference.stored === null || difference.namedBy.raw === null || isDeepStrictEqual(difference.stored, difference.namedBy.raw));
    const sent = invisible.get(`${difference.table}|${difference.key}|${difference.column}`) ?? [];
    return !sent.some((value) => isDeepStrictEqual(value, difference.stored));
  });
  expect(unexplained.slice(0, 10)).toEqual([]);
}

/** Coerced values are the clean ones: integers, booleans, instants to the microsecond; unknown enum values are stored as sent. */
function expectIssuesRead(drifted: Warehouse, clean: Warehouse): Record<string, number> {
  const seen: Record<string, number> = {};
  const wrong: unknown[] = [];
  for (const check of fieldIssuesWithValues(drifted, clean)) {
    if (check.stored === undefined) continue; // a copy's field (`contact.email_id`), stored on the copy's own row
    const count = (label: string, ok: boolean) => {
      seen[label] = (seen[label] ?? 0) + 1;
      if (!ok) wrong.push(check);
    };
    if (check.reason.startsWith("integer sent as a string")) count("numeric-string", check.stored === Number(check.raw) && check.stored === check.clean);
    else if (check.reason.startsWith("boolean sent as")) count("boolean-form", typeof check.stored === "boolean" && check.stored === check.clean);
    else if (check.reason.startsWith("date-time not in the documented UTC form")) {
      const stored = instantOf(check.stored);
      count("datetime-form", stored !== null && stored === instantOf(check.raw) && stored === instantOf(check.clean));
    } else if (check.reason.startsWith("not one of the documented values")) count("unknown-enum", check.stored === check.raw);
    // Unread and not stored: the row keeps what an earlier read wrote, older than the clean run's value when the field
    // arrived null or missing after an open was inserted between two reads of a schedule (hostile faults).
    else count("unread", check.stored === null || check.stored === check.clean || check.raw === null);
  }
  expect(wrong.slice(0, 10)).toEqual([]);
  return seen;
}

const rowId = (deviation: PlacedDeviation) => `${deviation.table}|${deviation.key}|${deviation.path}`;

/**
 * Every deviation served is named on its row under the source that read it, with the value as sent, and
 * nothing else is. #11 and #12 are one source (`leads`): a lead's rows carry what the last of them served.
 */
function expectDeviationsNamed(drifted: Warehouse, deviations: readonly PlacedDeviation[]): void {
  const named = deviations.filter((deviation) => deviation.visible);
  const problems: unknown[] = [];
  const bySource = new Map<string, PlacedDeviation[]>();
  for (const deviation of named) bySource.set(deviation.source, [...(bySource.get(deviation.source) ?? []), deviation]);
  for (const [source, list] of bySource) {
    if (source === "leads") continue;
    for (const deviation of list) {
      const issue = (drifted[deviation.table].get(deviation.key)?._field_issues as Record<string, Record<string, { raw: unknown }>> | null)?.[source]?.[deviation.path];
      if (!issue || !isDeepStrictEqual(issue.raw, deviation.kind === "missing" ? null : deviation.value)) problems.push({ deviation, issue });
    }
  }
  // Rows with issues under a source must be explained by the deviations served.
  const expected = new Set(named.map((deviation) => `${deviation.source}|${rowId(deviation)}`));
  for (const [table, rows] of Object.entries(drifted)) {
    for (const [key, row] of rows) {
      for (const [source, paths] of Object.entries((row._field_issues ?? {}) as Record<string, object>)) {
        for (const path of Object.keys(paths)) if (!expected.has(`${source}|${table}|${key}|${path}`)) problems.push({ spurious: `${source}|${table}|${key}|${path}` });
      }
    }
  }
  // Per lead: its rows carry the issues of #11 or of #12, whole.
  const leads = new Map<string, { walk: Set<string>; lookup: Set<string>; rows: Set<string> }>();
  for (const deviation of deviations) {
    if (deviation.source !== "leads") continue;
    const lead = deviation.leadUid ?? "";
    const entry = leads.get(lead) ?? { walk: new Set(), lookup: new Set(), rows: new Set() };
    leads.set(lead, entry);
    entry.rows.add(`${deviation.table}|${deviation.key}`);
    if (!deviation.visible) continue;
    (deviation.endpoint.endsWith("/leads/") ? entry.walk : entry.lookup).add(rowId(deviation));
  }
  for (const [lead, entry] of leads) {
    const actual = new Set<string>();
    for (const row of entry.rows) {
      const [table, ...key] = row.split("|");
      for (const path of issuePaths(drifted[table as keyof Warehouse].get(key.join("|")), "leads")) actual.add(`${row}|${path}`);
    }
    const same = (set: Set<string>) => set.size === actual.size && [...set].every((item) => actual.has(item));
    if (!same(entry.walk) && !same(entry.lookup)) problems.push({ lead, actual: [...actual].sort(), walk: [...entry.walk].sort(), lookup: [...entry.lookup].sort() });
  }
  expect(problems.slice(0, 5)).toEqual([]);
}

/**
 * Every extra field served is kept in `_extra` of its row (a campaign's settings' under `_extra.settings`),
 * with a value one source sent. A lead is fetched alone (#12) only when its events moved, so only what the
 * walk (#11) and the other endpoints served must be there.
 */
function expectExtrasKept(drifted: Warehouse, deviations: readonly PlacedDeviation[]): number {
  const extras = deviations.filter((deviation) => deviation.kind === "extra-field");
  const required = new Set(extras.filter((deviation) => deviation.endpoint !== PATHS.lead));
  const sent = new Map<string, unknown[]>();
  const homes = extras.map((deviation) => {
    const home = extraFieldHome(deviation, drifted);
    const id = `${home.within ?? ""}|${home.name}|${JSON.stringify(home.row?.uid ?? home.row?.id ?? `${String(home.row?.schedule_id)}|${String(home.row?.link)}|${String(home.row?.clicked_on ?? home.row?.opened_on)}`)}`;
    sent.set(id, [...(sent.get(id) ?? []), deviation.value]);
    return { deviation, home, id };
  });
  const lost = homes.filter(({ deviation, home, id }) => {
    if (!required.has(deviation)) return false;
    const extra = (home.row?._extra ?? null) as Record<string, unknown> | null;
    const holder = (home.within ? extra?.[home.within] : extra) as Record<string, unknown> | undefined;
    return !holder || !(home.name in holder) || !(sent.get(id) ?? []).some((value) => isDeepStrictEqual(value, holder[home.name]));
  });
  expect(lost.slice(0, 5).map(({ deviation }) => deviation)).toEqual([]);
  return required.size;
}

/** All the checks of a drifted run against a clean warehouse of the same data. */
function expectTolerated(run: Case, clean: Warehouse, snapshot: AccountSnapshot) {
  expectPlacedInFull(run);
  const drifted = run.drifted;
  const deviations = placedDeviations(run.emulator, snapshot);
  expectColumnsCleanOrNamed(drifted, clean, deviations);
  const read = expectIssuesRead(drifted, clean);
  expectDeviationsNamed(drifted, deviations);
  const extras = expectExtrasKept(drifted, deviations);
  return { deviations, read, extras, drifted };
}

/**
 * Every case is prepared up front, a few at a time (the hostile ones mostly wait out Retry-After, so they
 * run beside the others): its own emulator (seed 5, so every case without faults serves the same data as
 * the clean reference), its drifted warehouse, and what it is compared with. Each test awaits its case.
 */
interface Prepared extends Case {
  clean: Warehouse;
  snapshot: AccountSnapshot;
}

const emulators: RunningEmulator[] = [];
const prepared = new Map<string, Promise<Prepared>>();
let cleanReference: Promise<{ clean: Warehouse; snapshot: AccountSnapshot }>;

async function emulatorWith(options: EmulatorOptionsInput): Promise<RunningEmulator> {
  const emulator = await startEmulator({ ...EMULATOR, ...options });
  emulators.push(emulator);
  return emulator;
}

/** A clean warehouse of `emulator`'s data and its clean rendering, read with faults and drift off (then put back). */
async function cleanOf(emulator: RunningEmulator, schema: string): Promise<{ clean: Warehouse; snapshot: AccountSnapshot }> {
  const saved = { faults: emulator.settings.faults, drift: emulator.settings.drift };
  Object.assign(emulator.settings, { faults: "none", drift: "none" });
  const reference = await attachWarehouse(emulator, databaseUrl(), schema);
  let clean: Warehouse;
  try {
    const summary = await runFullSync(reference.context());
    if (summary.outcome !== "succeeded") throw new Error(`the clean reference sync ended ${summary.outcome}: ${JSON.stringify({ failures: summary.failures, rejected: summary.rejected, skipped: summary.skipped })}`);
    clean = await readWarehouse(reference.warehouse.db, schema);
  } finally {
    await reference.close();
  }
  const snapshot = await readClean(emulator, TEST_KEY);
  Object.assign(emulator.settings, saved);
  return { clean, snapshot };
}

/** Runs `work` with at most `limit` at a time. */
function limiter(limit: number): <T>(work: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (work) => {
    if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    running += 1;
    try {
      return await work();
    } finally {
      running -= 1;
      waiting.shift()?.();
    }
  };
}

/**
 * Cases at a time: each holds a pool of connections while it syncs, and PostgreSQL is shared. The hostile
 * cases spend most of their time waiting out Retry-After, so they have slots of their own.
 */
const slot = limiter(3);
const hostileSlot = limiter(3);

/** A case without faults: the data never changes, so the shared clean reference holds for it. */
function quietCase(name: string, options: EmulatorOptionsInput, keepOpen = false): void {
  prepared.set(
    name,
    slot(async () => {
      const emulator = await emulatorWith({ ...options, faults: "none" });
      const run = await driftedRun(emulator, name, keepOpen);
      return { ...run, ...(await cleanReference) };
    }),
  );
}

/** A case under hostile faults: compared with the clean rendering of what the faults left. */
function hostileCase(name: string, options: EmulatorOptionsInput): void {
  prepared.set(
    name,
    hostileSlot(async () => {
      const emulator = await emulatorWith({ ...options, faults: "hostile" });
      const run = await driftedRun(emulator, name);
      return { ...run, ...(await cleanOf(emulator, `${name}_clean`)) };
    }),
  );
}

const schemaName = (text: string) => text.replace(/[^a-z]+/g, "_");
const ORDERS = ["asc", "desc", "shuffle"] as const;
const PAGE_CASES = [...PAGE_KINDS.map((kind) => [kind, [kind]] as const), ["all page kinds", [...PAGE_KINDS]] as const];

beforeAll(async () => {
  cleanReference = slot(async () => cleanOf(await emulatorWith({}), "clean_reference"));
  for (const order of ORDERS) hostileCase(`hostile_${order}`, { order, drift: "wild" });
  for (const kind of RECORD_DRIFT_KINDS) quietCase(schemaName(`kind ${kind}`), { drift: "wild", driftKinds: [kind] });
  for (const [name, kinds] of PAGE_CASES) quietCase(schemaName(`page ${name}`), { drift: "wild", driftKinds: [...kinds] });
  quietCase("page_total_missing", { drift: "wild", driftKinds: ["total-missing", ...PAGE_KINDS] });
  quietCase("all_kinds_twice", { drift: "wild" }, true);
  // Failures surface in the tests that await them.
  await Promise.allSettled([cleanReference, ...prepared.values()]);
}, 180_000);
afterAll(async () => {
  for (const run of await Promise.allSettled(prepared.values())) if (run.status === "fulfilled") await run.value.fixture?.close();
  for (const emulator of emulators) await emulator.close();
});

const caseOf = (name: string) => prepared.get(name) as Promise<Prepared>;

/** What each record-level kind shows in the issues it leaves. */
const READ_AS: Partial<Record<RecordDriftKind, string>> = {
  "numeric-string": "numeric-string",
  "boolean-form": "boolean-form",
  "datetime-form": "datetime-form",
  "unknown-enum": "unknown-enum",
  null: "unread",
  missing: "unread",
};

describe.each(RECORD_DRIFT_KINDS)("record-level drift %s alone (wild)", (kind) => {
  it("lands every record with its children, each column clean or named, each deviation named or kept", async () => {
    const run = await caseOf(schemaName(`kind ${kind}`));
    const { deviations, read, extras } = expectTolerated(run, run.clean, run.snapshot);
    expect(deviations.filter((deviation) => deviation.kind === kind).length).toBeGreaterThan(10);
    const label = READ_AS[kind];
    if (label !== undefined) expect(read[label] ?? 0).toBeGreaterThan(0);
    if (kind === "extra-field") expect(extras).toBeGreaterThan(10);
    else expect(Object.keys(run.summary.fieldIssues).length).toBeGreaterThan(0);
  });
});

describe.each(PAGE_CASES)("page-level drift: %s (wild)", (name) => {
  it("lands exactly the emulator's records, every value clean", async () => {
    const run = await caseOf(schemaName(`page ${name}`));
    expectPlacedInFull(run);
    expect(columnDifferences(run.drifted, run.clean).slice(0, 5)).toEqual([]);
    expect(run.summary.fieldIssues).toEqual({});
  });
});

describe("page-level drift with pages that announce no usable total (wild)", () => {
  it("lands exactly the emulator's records, every value clean, and names the listings that sent no total", async () => {
    const run = await caseOf("page_total_missing");
    expectPlacedInFull(run);
    expect(columnDifferences(run.drifted, run.clean).slice(0, 5)).toEqual([]);
    const fields = Object.keys(run.summary.fieldIssues);
    // Which listings drew a page without a total depends on the order of the run's requests.
    expect(fields.length).toBeGreaterThan(0);
    expect(fields.filter((field) => !field.endsWith(".total"))).toEqual([]);
  });
});

describe("every kind at once, faults off, run twice", () => {
  it("tolerates them together", async () => {
    const run = await caseOf("all_kinds_twice");
    const { read } = expectTolerated(run, run.clean, run.snapshot);
    for (const label of ["numeric-string", "boolean-form", "datetime-form", "unknown-enum", "unread"]) expect(read[label] ?? 0).toBeGreaterThan(0);
    expect(run.summary.fieldIssues).toMatchObject({ "schedules.status": expect.any(Number) });
  });

  it("a run with nothing changed upstream rewrites no row, field issues included", async () => {
    const { fixture } = await caseOf("all_kinds_twice");
    if (!fixture) throw new Error("the case keeps its warehouse open for more runs");
    const db = fixture.warehouse.db;
    // The second run makes the terminal campaigns' second final walk, which may write what a lookup (#12) of the
    // first run read otherwise: drift makes the endpoints disagree about a record. The third changes nothing.
    expect((await runFullSync(fixture.context())).outcome).toBe("succeeded");
    const issuesBefore = await db.selectFrom("field_issues").select(["table_name", "record_key", "source", "field", "first_seen_at"]).execute();
    const startedAt = new Date();
    const second = await runFullSync(fixture.context());
    expect(second.outcome).toBe("succeeded");
    const touched: Record<string, number> = {};
    for (const table of ["workspaces", "domains", "contact_lists", "campaigns", "campaign_sending_domains", "email_sequences", "leads", "contacts", "schedules", "replies", "link_clicks", "email_opens"]) {
      const result = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where _synced_at >= ${startedAt} or _deleted_at is not null`.execute(db);
      if ((result.rows[0]?.n ?? 0) > 0) touched[table] = result.rows[0]?.n ?? 0;
    }
    expect(touched).toEqual({});
    const issuesAfter = await db.selectFrom("field_issues").select(["table_name", "record_key", "source", "field", "first_seen_at"]).execute();
    const order = (rows: typeof issuesBefore) => rows.map((row) => JSON.stringify(row)).sort();
    expect(order(issuesAfter)).toEqual(order(issuesBefore));
  });
});

describe.each(ORDERS)("every kind at once under hostile faults, order %s", (order) => {
  it("lands every record with its children, each column clean or named, each deviation named or kept", async () => {
    const run = await caseOf(`hostile_${order}`);
    expect(run.summary.retries).toBeGreaterThan(0);
    expectTolerated(run, run.clean, run.snapshot);
  });
});
