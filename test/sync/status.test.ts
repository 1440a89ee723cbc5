import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { achievedCadences, campaignLag, deviationsOf, eventLag, fieldIssueCounts, rejectedCounts } from "../../src/sync/status.ts";
import { openWarehouse, type Warehouse } from "../../src/warehouse/connect.ts";
import { migrateToLatest } from "../../src/warehouse/migrate.ts";
import { upsert } from "../../src/warehouse/upsert.ts";
import { useTestDatabase } from "../support/database.ts";

const databaseUrl = useTestDatabase("status");
let warehouse: Warehouse;
const now = new Date("2026-06-01T12:00:00.000Z");
const minutesAgo = (minutes: number) => new Date(now.getTime() - minutes * 60_000);

beforeAll(async () => {
  warehouse = await openWarehouse({ databaseUrl: databaseUrl(), dataDir: ".coldsync", schema: "status" });
  await migrateToLatest(warehouse);
  const campaign = (uid: string, status: "running" | "complete" | "scheduled") => ({ uid, _account: "acme", name: uid, workspace_id: 1, created_on: minutesAgo(10_000), status, _observed_at: now });
  await upsert(
    warehouse.db,
    "campaigns",
    [campaign("active", "running"), campaign("done", "complete"), campaign("new", "running"), campaign("unheard", "running"), campaign("waiting", "scheduled"), campaign("ended", "complete")],
    now,
  );
  const checkpoints = [
    ...["campaign_detail", "replies", "link_clicks", "email_opens", "email_sequences"].flatMap((stream) => [
      { campaign_uid: "active", stream, at: minutesAgo(5) },
      ...(stream === "email_sequences" ? [] : [{ campaign_uid: "done", stream, at: minutesAgo(5) }]),
    ]),
    // Its replies listing failed on every read so far: no checkpoint row for it.
    ...["campaign_detail", "leads", "link_clicks", "email_opens", "email_sequences"].map((stream) => ({ campaign_uid: "unheard", stream, at: minutesAgo(5) })),
    // It has not started: the engine reads no events of it.
    ...["campaign_detail", "leads", "email_sequences"].map((stream) => ({ campaign_uid: "waiting", stream, at: minutesAgo(5) })),
    { campaign_uid: "active", stream: "leads", at: minutesAgo(30) },
    { campaign_uid: "done", stream: "leads", at: minutesAgo(9_000), state: { scannedStatus: "complete", terminalWalks: 2 } },
    { campaign_uid: "done", stream: "email_sequences", at: minutesAgo(9_000) },
    { campaign_uid: "new", stream: "leads", at: null },
    // Complete when first seen, and its leads walk has failed every time since: no final walk yet.
    ...["campaign_detail", "replies", "link_clicks", "email_opens"].map((stream) => ({ campaign_uid: "ended", stream, at: minutesAgo(5) })),
    { campaign_uid: "ended", stream: "leads", at: null },
  ];
  await warehouse.db
    .insertInto("sync_checkpoints")
    .values(
      checkpoints.map(({ campaign_uid, stream, at, ...rest }) => ({
        account: "acme",
        campaign_uid,
        stream,
        last_complete_scan_at: at,
        updated_at: now,
        ...("state" in rest ? { state: JSON.stringify(rest.state) } : {}),
      })),
    )
    .execute();
});
afterAll(async () => {
  await warehouse.destroy();
});

describe("campaignLag", () => {
  it("is the age of the stalest stream that runs every cycle", async () => {
    const lags = await campaignLag(warehouse.db, "acme", now);
    expect(lags.get("active")?.lagSeconds).toBe(30 * 60);
  });

  it("leaves out a terminal campaign's leads and email sequences once they had their final walks, not before", async () => {
    const lags = await campaignLag(warehouse.db, "acme", now);
    expect(lags.get("done")).toMatchObject({ finalWalksDone: true, lagSeconds: 5 * 60 });
    expect(lags.get("ended")).toMatchObject({ finalWalksDone: false, lagSeconds: null, streams: { leads: null, email_sequences: null } });
  });

  it("is unknown while a stream never completed, and then counts behind from when the campaign was first seen", async () => {
    const lags = await campaignLag(warehouse.db, "acme", now);
    expect(lags.get("new")?.lagSeconds).toBeNull();
    expect(lags.get("new")?.behindSeconds).toBe(0);
    const later = new Date(now.getTime() + 3_600_000);
    expect((await campaignLag(warehouse.db, "acme", later)).get("new")?.behindSeconds).toBe(3_600);
    expect((await campaignLag(warehouse.db, "acme", later)).get("active")?.behindSeconds).toBe(90 * 60);
  });

  it("takes a stream the campaign should have read but has no checkpoint for as never completed: its events once it started", async () => {
    const lags = await campaignLag(warehouse.db, "acme", now);
    expect(lags.get("unheard")).toMatchObject({ streams: { replies: null }, stalestScanAt: null, lagSeconds: null });
    expect(lags.get("waiting")?.lagSeconds).toBe(5 * 60);
    expect(Object.keys(lags.get("waiting")?.streams ?? {})).not.toContain("replies");
  });
});

describe("fieldIssueCounts and rejectedCounts", () => {
  it("count live rows per table and field, array positions folded, a row read by two sources once", async () => {
    const issue = (raw: unknown) => ({ reason: "not one of the documented values; kept as text", raw });
    const reply = (id: number) => ({ id, campaign_uid: "active", schedule_id: id, body_plain_text: "", body_html: "", received_on: now, reply_classification: "out_of_office" });
    await upsert(warehouse.db, "replies", [1, 2].map((id) => ({ ...reply(id), _field_issues: { reply_classification: issue("out_of_office") } })), now, { source: "replies" });
    await upsert(warehouse.db, "replies", [{ ...reply(1), _field_issues: { reply_classification: issue("out_of_office") } }], now, { source: "leads" });
    const campaign = { uid: "active", _account: "acme", name: "active", workspace_id: 1, created_on: minutesAgo(10_000), status: "running", _observed_at: now };
    await upsert(warehouse.db, "campaigns", [{ ...campaign, skip_days: ["Monday", "Holiday"], _field_issues: { "settings.skip_days.1": issue("Holiday") } }], now, { source: "campaign_detail" });
    // Another account's campaign and reply in the same warehouse are not this account's issues.
    await upsert(warehouse.db, "campaigns", [{ ...campaign, uid: "theirs-deviating", _account: "someone-else", _field_issues: { status: issue("sleeping") } }], now, { source: "campaigns" });
    await upsert(warehouse.db, "replies", [{ ...reply(3), campaign_uid: "theirs-deviating", _field_issues: { reply_classification: issue("out_of_office") } }], now, { source: "replies" });
    expect(await fieldIssueCounts(warehouse.db, "acme")).toEqual([
      { table_name: "campaigns", field: "settings.skip_days.*", rows: 1 },
      { table_name: "replies", field: "reply_classification", rows: 2 },
    ]);
    expect(await fieldIssueCounts(warehouse.db, "someone-else")).toEqual([
      { table_name: "campaigns", field: "status", rows: 1 },
      { table_name: "replies", field: "reply_classification", rows: 1 },
    ]);
    expect(await rejectedCounts(warehouse.db, "acme")).toEqual([]);
  });
});

describe("eventLag and achievedCadences", () => {
  it("give p50 and p95 lag per stream over the recent events, from the event's own time to the warehouse", async () => {
    const minutesBefore = (minutes: number) => new Date(Date.now() - minutes * 60_000);
    const opens = [1, 2, 3, 4, 10].map((lagMinutes, index) => ({ campaign_uid: "active", schedule_id: 900 + index, opened_on: minutesBefore(30 + lagMinutes) }));
    await upsert(warehouse.db, "email_opens", opens, minutesBefore(30));
    // An open of last month says nothing about today's freshness.
    await upsert(warehouse.db, "email_opens", [{ campaign_uid: "active", schedule_id: 999, opened_on: minutesBefore(40_000) }], minutesBefore(30));
    // Another account's campaign in the same warehouse is not this account's freshness.
    await upsert(warehouse.db, "campaigns", [{ uid: "theirs", _account: "someone-else", name: "theirs", workspace_id: 9, created_on: now, status: "running", _observed_at: now }], now);
    await upsert(warehouse.db, "email_opens", [{ campaign_uid: "theirs", schedule_id: 990, opened_on: minutesBefore(35) }], minutesBefore(30));
    const [opensLag] = await eventLag(warehouse.db, "acme");
    expect(opensLag).toMatchObject({ stream: "email_opens", events: 5 });
    expect(await eventLag(warehouse.db, "someone-else")).toMatchObject([{ stream: "email_opens", events: 1 }]);
    expect(opensLag?.p50).toBeCloseTo(180, 0);
    expect(opensLag?.p95).toBeGreaterThan(420);
    expect(opensLag?.p95).toBeLessThanOrEqual(600);
  });

  it("give each rhythm's time between its last two complete cycles", async () => {
    await warehouse.db
      .insertInto("sync_checkpoints")
      .values([
        { account: "acme", campaign_uid: "active", stream: "replies", last_complete_scan_at: minutesAgo(1), state: JSON.stringify({ previousCompleteScanAt: minutesAgo(2).toISOString() }), updated_at: now },
        { account: "acme", campaign_uid: "new", stream: "replies", last_complete_scan_at: minutesAgo(1), updated_at: now },
      ])
      .onConflict((conflict) => conflict.columns(["account", "campaign_uid", "stream"]).doUpdateSet((eb) => ({ state: eb.ref("excluded.state"), last_complete_scan_at: eb.ref("excluded.last_complete_scan_at") })))
      .execute();
    expect(await achievedCadences(warehouse.db, "acme")).toEqual([{ campaign_uid: "active", rhythm: "events", seconds: 60 }]);
  });

  it("time the leads rhythm by its leads walk, and by the campaign detail alone once the final walk is done", async () => {
    const checkpoint = (campaign_uid: string, stream: string, last: Date, state: Record<string, unknown>) => ({
      account: "acme",
      campaign_uid,
      stream,
      last_complete_scan_at: last,
      scan_started_at: null,
      state: JSON.stringify(state),
      updated_at: now,
    });
    await warehouse.db
      .insertInto("sync_checkpoints")
      .values([
        // The detail is read more often than the leads are walked: a walk that keeps failing must not look on time.
        checkpoint("active", "campaign_detail", minutesAgo(5), { previousCompleteScanAt: minutesAgo(15).toISOString() }),
        checkpoint("active", "leads", minutesAgo(30), { previousCompleteScanAt: minutesAgo(45).toISOString() }),
        checkpoint("done", "campaign_detail", minutesAgo(5), { previousCompleteScanAt: minutesAgo(65).toISOString() }),
        checkpoint("done", "leads", minutesAgo(9_000), { scannedStatus: "complete", terminalWalks: 2, previousCompleteScanAt: minutesAgo(10_000).toISOString() }),
      ])
      .onConflict((conflict) => conflict.columns(["account", "campaign_uid", "stream"]).doUpdateSet((eb) => ({ state: eb.ref("excluded.state"), last_complete_scan_at: eb.ref("excluded.last_complete_scan_at") })))
      .execute();
    const cadences = await achievedCadences(warehouse.db, "acme");
    expect(cadences.filter((row) => row.rhythm === "leads")).toEqual([
      { campaign_uid: "active", rhythm: "leads", seconds: 15 * 60 },
      { campaign_uid: "done", rhythm: "leads", seconds: 60 * 60 },
    ]);
  });
});

describe("deviationsOf", () => {
  it("names a run's deviations most frequent first, the first three, and how many fields there were", () => {
    expect(deviationsOf({})).toBe("");
    expect(deviationsOf({ "leads.total": 2, "schedules.status": 5 })).toBe("schedules.status 5, leads.total 2");
    expect(deviationsOf({ b: 1, a: 1, c: 3, d: 2 })).toBe("c 3, d 2, a 1, … (4 fields)");
  });
});
