import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fieldIssueRowsPerCampaign, warehouseHealth, type WarehouseHealth } from "../../src/http/status-page/campaign-health.ts";
import { engagement, everyDay } from "../../src/http/status-page/engagement.ts";
import { behindAfterMs, freshnessOf, streamCadenceMs } from "../../src/http/status-page/lag.ts";
import { recentRuns, requestsPerMinute, spreadPerMinute } from "../../src/http/status-page/runs.ts";
import type { Warehouse } from "../../src/warehouse/connect.ts";
import { useTestDatabase } from "../support/database.ts";
import { openMigratedWarehouse } from "../queue/warehouse.ts";
import { upsert } from "../../src/warehouse/upsert.ts";
import { campaignListingRow } from "../warehouse/rows.ts";
import { ACCOUNT, ACCOUNT_ERROR, BEHIND_ERROR, CADENCE, CAMPAIGN_STREAMS, NOW, seedStatusRows, UIDS } from "./status-page-rows.ts";

/** The queries behind each panel of the status page, against a warehouse whose rows the test wrote. */

const databaseUrl = useTestDatabase("status_data");
let warehouse: Warehouse;
let health: WarehouseHealth;

beforeAll(async () => {
  warehouse = await openMigratedWarehouse(databaseUrl());
  await seedStatusRows(warehouse);
  health = await warehouseHealth(warehouse.db, ACCOUNT, CADENCE, NOW);
});

afterAll(async () => {
  await warehouse.destroy();
});

const campaign = (uid: string) => {
  const found = health.campaigns.find((row) => row.uid === uid);
  if (!found) throw new Error(`campaign ${uid} is not on the page`);
  return found;
};

describe("cadence and lag", () => {
  it("follows the status: active, idle (unknown statuses too) and terminal, plus one discovery period and 5 min", () => {
    expect(streamCadenceMs("leads", "running", CADENCE)).toBe(CADENCE.activeEveryMs);
    expect(streamCadenceMs("leads", "paused", CADENCE)).toBe(CADENCE.activeEveryMs);
    for (const status of ["created", "scheduled", "creating", "archived-by-magic", null]) expect(streamCadenceMs("leads", status, CADENCE)).toBe(CADENCE.idleEveryMs);
    for (const status of ["complete", "cancelled", "failed"]) expect(streamCadenceMs("replies", status, CADENCE)).toBe(CADENCE.terminalEveryMs);
    expect(behindAfterMs("replies", "running", CADENCE)).toBe(25 * 60_000);
    const scanned = (ageMs: number) => ({ leads: new Date(NOW.getTime() - ageMs), replies: new Date(NOW.getTime() - ageMs) });
    expect(freshnessOf({ status: "running", streams: scanned(25 * 60_000), finalWalksDone: false }, CADENCE, NOW)).toEqual({ freshness: "fresh", behind: [] });
    expect(freshnessOf({ status: "running", streams: scanned(25 * 60_000 + 1_000), finalWalksDone: false }, CADENCE, NOW)).toEqual({ freshness: "behind", behind: ["leads", "replies"] });
    expect(freshnessOf({ status: "running", streams: { leads: null }, finalWalksDone: false }, CADENCE, NOW).freshness).toBe("never");
  });

  it("holds replies, clicks and opens to the events rhythm where it runs on its own: its cadence plus one tick and 5 min", () => {
    const withEvents = { ...CADENCE, eventsEveryMs: 60_000 };
    expect(streamCadenceMs("email_opens", "running", withEvents)).toBe(60_000);
    expect(behindAfterMs("email_opens", "running", withEvents)).toBe(7 * 60_000);
    expect(behindAfterMs("leads", "running", withEvents)).toBe(25 * 60_000);
    const scans = { leads: new Date(NOW.getTime() - 10 * 60_000), email_opens: new Date(NOW.getTime() - 10 * 60_000) };
    expect(freshnessOf({ status: "running", streams: scans, finalWalksDone: false }, withEvents, NOW)).toEqual({ freshness: "behind", behind: ["email_opens"] });
    expect(freshnessOf({ status: "running", streams: scans, finalWalksDone: false }, CADENCE, NOW)).toEqual({ freshness: "fresh", behind: [] });
  });
});

describe("campaigns panel", () => {
  it("lists the account's campaigns only, in the warehouse's order", () => {
    expect(health.campaigns.map((row) => row.uid)).toEqual([UIDS.fresh, UIDS.behind, UIDS.never, UIDS.done]);
  });

  it("judges each campaign against its cadence", () => {
    expect(campaign(UIDS.fresh)).toMatchObject({ freshness: "fresh", lagSeconds: 600, cadenceMs: CADENCE.activeEveryMs });
    expect(campaign(UIDS.behind)).toMatchObject({ freshness: "behind", lagSeconds: 7200 });
    expect(campaign(UIDS.never)).toMatchObject({ freshness: "never", lagSeconds: null, streams: {} });
    // The final scan of a complete campaign's leads is days old, but only the other streams count.
    expect(campaign(UIDS.done)).toMatchObject({ freshness: "fresh", lagSeconds: 3600, cadenceMs: CADENCE.terminalEveryMs });
    expect(Object.keys(campaign(UIDS.fresh).streams).sort()).toEqual(["campaign_detail", "email_opens", "email_sequences", "leads", "link_clicks", "replies"]);
  });

  it("gives the events rhythm's cadence only to campaigns that started sending", async () => {
    const withEvents = await warehouseHealth(warehouse.db, ACCOUNT, { ...CADENCE, eventsEveryMs: 60_000 }, NOW);
    const eventsCadenceOf = (uid: string) => withEvents.campaigns.find((row) => row.uid === uid)?.eventsCadenceMs;
    expect(eventsCadenceOf(UIDS.fresh)).toBe(60_000);
    expect(eventsCadenceOf(UIDS.done)).toBe(CADENCE.terminalEveryMs);
    expect(eventsCadenceOf(UIDS.never)).toBeUndefined();
    expect(campaign(UIDS.fresh).eventsCadenceMs).toBeUndefined();
  });

  it("counts rows, records still rejected and rows with field issues per campaign", async () => {
    expect(campaign(UIDS.fresh).rows).toEqual({ leads: 2, replies: 1, link_clicks: 1, email_opens: 1 });
    // c-fresh's rejected record was resolved; c-behind's is still met.
    expect(campaign(UIDS.fresh).rejected).toBe(0);
    expect(campaign(UIDS.behind).rejected).toBe(1);
    const fieldIssueRows = await fieldIssueRowsPerCampaign(warehouse.db, ACCOUNT);
    expect(fieldIssueRows[UIDS.fresh]).toBe(3);
    expect(fieldIssueRows[UIDS.behind]).toBe(1);
    expect(fieldIssueRows[UIDS.never] ?? 0).toBe(0);
  });

  it("shows the last error, current until every counted stream completed after it", () => {
    expect(campaign(UIDS.behind).lastError).toMatchObject({ message: BEHIND_ERROR, stream: "email_opens", current: true });
    expect(campaign(UIDS.done).lastError).toMatchObject({ message: "old failure", current: false });
    expect(campaign(UIDS.fresh).lastError).toBeNull();
  });

  it("judges recovery from the exact scan times: a scan a few hundred milliseconds after the error counts, one before it does not", async () => {
    const account = "sub-second";
    const errorAt = new Date(NOW.getTime() - 10 * 60_000);
    const offsets = { "c-after": 300, "c-before": -300 };
    await upsert(warehouse.db, "campaigns", Object.keys(offsets).map((uid) => ({ ...campaignListingRow(uid, { status: "running" }), _account: account })), errorAt);
    for (const [uid, offsetMs] of Object.entries(offsets)) {
      const scannedAt = new Date(errorAt.getTime() + offsetMs);
      await warehouse.db
        .insertInto("sync_checkpoints")
        .values(CAMPAIGN_STREAMS.map((stream) => ({ account, campaign_uid: uid, stream, last_complete_scan_at: scannedAt, updated_at: scannedAt })))
        .execute();
      await warehouse.db
        .insertInto("sync_runs")
        .values({ account, scope: uid, trigger: "worker", started_at: errorAt, finished_at: errorAt, outcome: "partial", requests: 1, errors: JSON.stringify([{ campaign_uid: uid, stream: "leads", message: "boom" }]) })
        .execute();
    }
    const judged = await warehouseHealth(warehouse.db, account, CADENCE, NOW);
    expect(Object.fromEntries(judged.campaigns.map((row) => [row.uid, row.lastError?.current]))).toEqual({ "c-after": false, "c-before": true });
  });

  it("keeps a campaign's unrecovered error however many newer runs of other campaigns recorded errors", async () => {
    // Complete campaigns (24 h cadence) that failed 2 h ago, one in its own job, one in an account-wide run; since then
    // the account's other campaigns recorded 500 runs with (transient) errors, as 429s do across thousands of campaigns.
    const account = "many-errors";
    const at = (ms: number) => new Date(NOW.getTime() - ms);
    const failedAt = at(2 * 3_600_000);
    await upsert(warehouse.db, "campaigns", ["stuck", "stuck-in-full-sync"].map((uid) => ({ ...campaignListingRow(uid, { status: "complete" }), _account: account })), at(3 * 3_600_000));
    const run = (scope: string | null, finishedAt: Date, errors: object[]) => ({
      account,
      scope,
      trigger: "worker" as const,
      started_at: finishedAt,
      finished_at: finishedAt,
      outcome: "partial" as const,
      requests: 1,
      errors: JSON.stringify(errors),
    });
    await warehouse.db
      .insertInto("sync_runs")
      .values([
        run("stuck", failedAt, [{ campaign_uid: "stuck", stream: "email_opens", message: "stuck failure" }]),
        run(null, failedAt, [{ campaign_uid: "stuck-in-full-sync", stream: "replies", message: "full sync failure" }]),
        ...Array.from({ length: 500 }, (_, index) => run(`noisy-${index}`, at(3_600_000 - index * 1000), [{ campaign_uid: `noisy-${index}`, stream: "replies", message: "rate limited (429)" }])),
      ])
      .execute();
    const judged = await warehouseHealth(warehouse.db, account, CADENCE, NOW);
    const lastErrorOf = (uid: string) => judged.campaigns.find((row) => row.uid === uid)?.lastError;
    expect(lastErrorOf("stuck")).toMatchObject({ message: "stuck failure", current: true });
    expect(lastErrorOf("stuck-in-full-sync")).toMatchObject({ message: "full sync failure", current: true });
  });

  it("reports the account-level streams, their rejected records and their last error", () => {
    expect(Object.keys(health.account.streams).sort()).toEqual(["campaigns", "contact_lists", "domains", "workspaces"]);
    expect(health.account.rejected).toBe(1);
    expect(health.account.lastError).toMatchObject({ message: ACCOUNT_ERROR, stream: "domains", current: true });
  });
});

describe("runs panel", () => {
  it("gives the last runs of the account, oldest first, a running one timed up to now", async () => {
    const runs = await recentRuns(warehouse.db, ACCOUNT, 3, NOW);
    expect(runs.map((run) => [run.scope, run.outcome])).toEqual([
      [UIDS.behind, "partial"],
      [null, "partial"],
      [UIDS.fresh, "running"],
    ]);
    expect(runs.map((run) => run.durationMs)).toEqual([60_000, 60_000, 60_000]);
    expect(runs[0]).toMatchObject({ requests: 120, errors: 1, firstError: BEHIND_ERROR, fieldIssues: { "leads.total": 2, "schedules.status": 5 } });
    expect(runs[1]?.fieldIssues).toEqual({});
  });

  it("spreads each finished run's requests over the minutes it lasted", () => {
    const now = new Date("2026-06-01T12:03:30Z");
    const perMinute = spreadPerMinute(
      [
        { startedAt: new Date("2026-06-01T12:00:30Z"), finishedAt: new Date("2026-06-01T12:02:30Z"), requests: 120 },
        { startedAt: new Date("2026-06-01T12:03:10Z"), finishedAt: new Date("2026-06-01T12:03:10Z"), requests: 7 },
        { startedAt: new Date("2026-06-01T11:00:00Z"), finishedAt: new Date("2026-06-01T11:01:00Z"), requests: 50 },
      ],
      now,
      4,
    );
    expect(perMinute.map((minute) => [minute.minute.toISOString().slice(11, 16), minute.requests])).toEqual([
      ["12:00", 30],
      ["12:01", 60],
      ["12:02", 30],
      ["12:03", 7],
    ]);
  });

  it("reads the requests of the last hour from sync runs and verifications", async () => {
    const perMinute = await requestsPerMinute(warehouse.db, ACCOUNT, 60, NOW);
    expect(perMinute).toHaveLength(60);
    // 120 (c-behind's run), 30 (the account run) and 40 (the verification); the run of 3 h ago is outside, the other account's is not ours.
    expect(Math.round(perMinute.reduce((sum, minute) => sum + minute.requests, 0))).toBe(190);
    expect(perMinute.at(-1)?.minute).toEqual(NOW);
  });
});

describe("engagement panel", () => {
  it("gives the funnel of the account's campaigns, most sent first", async () => {
    const data = await engagement(warehouse.db, ACCOUNT, 10);
    expect(data.funnel.map((row) => row.uid)).toEqual([UIDS.fresh, UIDS.behind, UIDS.done, UIDS.never]);
    expect(data.funnel[0]).toMatchObject({ leads: 2, sent: 2, opened: 1, clicked: 1, replied: 1, positive: 1, replyRate: 0.5 });
  });

  it("gives every day of the window up to the latest activity, quiet days as zeros", async () => {
    const { days } = await engagement(warehouse.db, ACCOUNT, 10);
    expect(days.map((day) => day.day)).toEqual(Array.from({ length: 10 }, (_, index) => `2026-05-${String(19 + index).padStart(2, "0")}`));
    const byDay = Object.fromEntries(days.map((day) => [day.day, day]));
    expect(byDay["2026-05-20"]).toEqual({ day: "2026-05-20", sends: 1, opens: 0, clicks: 1, replies: 0 });
    expect(byDay["2026-05-21"]).toMatchObject({ replies: 1 });
    expect(byDay["2026-05-28"]).toMatchObject({ sends: 1, opens: 1 });
    expect(days.reduce((sum, day) => sum + day.sends + day.opens + day.clicks + day.replies, 0)).toBe(5);
  });

  it("is empty, not broken, before anything happened", () => {
    expect(everyDay([], 30)).toEqual([]);
  });
});
