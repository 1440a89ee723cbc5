import { sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { pruneRunLog } from "../../src/sync/retention.ts";
import type { Warehouse } from "../../src/warehouse/connect.ts";
import type { RunOutcome } from "../../src/warehouse/database.ts";
import { useTestDatabase } from "../support/database.ts";
import { openMigratedWarehouse } from "../queue/warehouse.ts";

/** pruneRunLog: which rows of the run log go, which stay whatever their age, and that batches and dry runs add up. */

const databaseUrl = useTestDatabase("retention");
let warehouse: Warehouse;

const DAY_MS = 86_400_000;
const NOW = new Date("2026-12-01T12:00:00Z");
const CUTOFF = new Date(NOW.getTime() - 30 * DAY_MS);
const daysAgo = (days: number) => new Date(NOW.getTime() - days * DAY_MS);

beforeAll(async () => {
  warehouse = await openMigratedWarehouse(databaseUrl(), "retention");
});
afterAll(async () => {
  await warehouse.destroy();
});
beforeEach(async () => {
  await sql`TRUNCATE sync_runs, sync_checkpoints, rejected_records, verifications`.execute(warehouse.db);
});

async function run(finishedDaysAgo: number | null, { account = "acme", outcome = "succeeded" as RunOutcome } = {}): Promise<number> {
  const finishedAt = finishedDaysAgo === null ? null : daysAgo(finishedDaysAgo);
  const row = await warehouse.db
    .insertInto("sync_runs")
    .values({ account, scope: "c1", trigger: "worker", started_at: daysAgo((finishedDaysAgo ?? 40) + 0.01), finished_at: finishedAt, outcome })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

async function verification(finishedDaysAgo: number, campaignUid: string | null = null, account = "acme"): Promise<number> {
  const row = await warehouse.db
    .insertInto("verifications")
    .values({
      account,
      campaign_uid: campaignUid,
      trigger: "worker",
      started_at: daysAgo(finishedDaysAgo + 0.01),
      finished_at: daysAgo(finishedDaysAgo),
      checks: 1,
      problems: 0,
      requests: 1,
      lines: "[]",
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

async function remainingRuns(): Promise<number[]> {
  return (await warehouse.db.selectFrom("sync_runs").select("id").orderBy("id").execute()).map((row) => row.id);
}

async function remainingVerifications(): Promise<number[]> {
  return (await warehouse.db.selectFrom("verifications").select("id").orderBy("id").execute()).map((row) => row.id);
}

describe("pruneRunLog", () => {
  it("deletes the account's runs that finished before the cutoff, and no newer one, no running one, no other account's", async () => {
    const old = [await run(31), await run(90, { outcome: "failed" }), await run(45, { outcome: "aborted" })];
    const kept = [await run(29), await run(null, { outcome: "running" }), await run(60, { account: "other" })];
    const pruned = await pruneRunLog(warehouse.db, "acme", CUTOFF);
    expect(pruned).toEqual({ before: CUTOFF, syncRuns: old.length, verifications: 0 });
    expect(await remainingRuns()).toEqual(kept);
  });

  it("keeps an old run a checkpoint names as its last, or a record still rejected names, but not one only a resolved record names", async () => {
    const named = await run(100);
    const metByRejected = await run(100);
    const metByResolved = await run(100);
    await warehouse.db
      .insertInto("sync_checkpoints")
      .values({ account: "acme", campaign_uid: "c1", stream: "leads", last_run_id: named, updated_at: daysAgo(100) })
      .execute();
    const rejected = (runId: number, identity: string, resolvedAt: Date | null) => ({
      run_id: runId,
      account: "acme",
      stream: "leads",
      campaign_uid: "c1",
      reason: "uid missing",
      payload: JSON.stringify({ identity }),
      payload_sha256: identity,
      identity,
      skipped: 0,
      first_seen_at: daysAgo(100),
      last_seen_at: daysAgo(100),
      times_seen: 1,
      resolved_at: resolvedAt,
    });
    await warehouse.db
      .insertInto("rejected_records")
      .values([rejected(metByRejected, "a", null), rejected(metByResolved, "b", daysAgo(99))])
      .execute();
    expect((await pruneRunLog(warehouse.db, "acme", CUTOFF)).syncRuns).toBe(1);
    expect(await remainingRuns()).toEqual([named, metByRejected]);
    // The resolved record stays, its run reference turned NULL by the foreign key.
    const resolved = await warehouse.db.selectFrom("rejected_records").select("run_id").where("identity", "=", "b").executeTakeFirstOrThrow();
    expect(resolved.run_id).toBeNull();
  });

  it("keeps the newest verification of the account and of each campaign, however old, and deletes the older ones", async () => {
    await verification(60);
    await verification(40);
    await verification(70, "c1");
    const newestOfCampaign = await verification(50, "c1");
    const onlyOfOtherCampaign = await verification(80, "c2");
    const recent = await verification(1);
    const otherAccount = await verification(90, null, "other");
    const pruned = await pruneRunLog(warehouse.db, "acme", CUTOFF);
    expect(pruned.verifications).toBe(3);
    // The account's of 40 days ago goes too: the one of yesterday is the verdict now.
    expect(await remainingVerifications()).toEqual([newestOfCampaign, onlyOfOtherCampaign, recent, otherAccount]);
  });

  it("deletes in batches until one comes back short, the same rows as one statement would", async () => {
    const old = await Promise.all(Array.from({ length: 7 }, (_, index) => run(31 + index)));
    const kept = await run(2);
    expect((await pruneRunLog(warehouse.db, "acme", CUTOFF, { batchSize: 3 })).syncRuns).toBe(old.length);
    expect(await remainingRuns()).toEqual([kept]);
  });

  it("counts what would go on a dry run, deleting nothing", async () => {
    const ids = [await run(31), await run(32), await run(5)];
    await verification(60);
    await verification(40);
    expect(await pruneRunLog(warehouse.db, "acme", CUTOFF, { dryRun: true })).toEqual({ before: CUTOFF, syncRuns: 2, verifications: 1 });
    expect(await remainingRuns()).toEqual(ids);
    expect(await remainingVerifications()).toHaveLength(2);
  });

  it("stops between batches once its signal is aborted", async () => {
    await Promise.all(Array.from({ length: 4 }, (_, index) => run(31 + index)));
    const controller = new AbortController();
    controller.abort(new Error("the worker is shutting down"));
    await expect(pruneRunLog(warehouse.db, "acme", CUTOFF, { batchSize: 2, signal: controller.signal })).rejects.toThrow("the worker is shutting down");
    expect(await remainingRuns()).toHaveLength(4);
  });
});
