import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dueForEvents, dueForLeads, eventsCadenceOf, isDue, leadsCadenceOf, type Cadence } from "../../src/queue/cadence.ts";
import { upsert } from "../../src/warehouse/upsert.ts";
import type { Warehouse } from "../../src/warehouse/connect.ts";
import { useTestDatabase } from "../support/database.ts";
import { openMigratedWarehouse } from "./warehouse.ts";

const MINUTE = 60_000;
const cadence: Cadence = { activeEveryMs: 15 * MINUTE, idleEveryMs: 60 * MINUTE, terminalEveryMs: 24 * 60 * MINUTE, eventsEveryMs: MINUTE, discoverEveryMs: 5 * MINUTE };
const now = new Date("2026-03-01T12:00:00Z");
const ago = (minutes: number) => new Date(now.getTime() - minutes * MINUTE);

describe("cadences", () => {
  it("follow the campaign's status for the leads rhythm", () => {
    expect(leadsCadenceOf("running", cadence)).toBe(15 * MINUTE);
    expect(leadsCadenceOf("paused", cadence)).toBe(15 * MINUTE);
    expect(leadsCadenceOf("created", cadence)).toBe(60 * MINUTE);
    expect(leadsCadenceOf("complete", cadence)).toBe(24 * 60 * MINUTE);
    // A status the spec does not list is neither running nor finished.
    expect(leadsCadenceOf("warming_up", cadence)).toBe(60 * MINUTE);
    expect(leadsCadenceOf(null, cadence)).toBe(60 * MINUTE);
  });

  it("give the events rhythm only to a campaign that started, at the terminal cadence once it finished", () => {
    expect(eventsCadenceOf({ status: "created", started_running_at: null }, cadence)).toBeUndefined();
    expect(eventsCadenceOf({ status: "scheduled", started_running_at: null }, cadence)).toBeUndefined();
    expect(eventsCadenceOf({ status: "running", started_running_at: null }, cadence)).toBe(MINUTE);
    expect(eventsCadenceOf({ status: "warming_up", started_running_at: ago(10) }, cadence)).toBe(MINUTE);
    // A status that could not be read is no proof that nothing can happen: its events are read.
    expect(eventsCadenceOf({ status: null, started_running_at: null }, cadence)).toBe(MINUTE);
    expect(eventsCadenceOf({ status: "complete", started_running_at: ago(100) }, cadence)).toBe(24 * 60 * MINUTE);
    expect(eventsCadenceOf({ status: "running", started_running_at: ago(10) }, { ...cadence, eventsEveryMs: undefined })).toBeUndefined();
  });

  it("make a rhythm due once its period passed, at once when it never completed or the campaign finished since", () => {
    expect(isDue(ago(14), 15 * MINUTE, now)).toBe(false);
    expect(isDue(ago(15), 15 * MINUTE, now)).toBe(true);
    expect(isDue(undefined, 15 * MINUTE, now)).toBe(true);
    expect(isDue(ago(2), 24 * 60 * MINUTE, now, { finishedAt: ago(1) })).toBe(true);
    expect(isDue(ago(2), 24 * 60 * MINUTE, now, { finishedAt: ago(3) })).toBe(false);
  });

  it("make a rhythm due at the check nearest to its period, not at the first check after a whole period", () => {
    // Events every minute, checked every minute: the scan the last tick queued ended 8 s after it.
    expect(isDue(new Date(now.getTime() - 52_000), MINUTE, now, { checkEveryMs: MINUTE })).toBe(true);
    expect(isDue(new Date(now.getTime() - 25_000), MINUTE, now, { checkEveryMs: MINUTE })).toBe(false);
    // Leads every 15 minutes, checked at each discovery (every 5): due at 13, not at 12.
    expect(isDue(ago(13), 15 * MINUTE, now, { checkEveryMs: 5 * MINUTE })).toBe(true);
    expect(isDue(ago(12), 15 * MINUTE, now, { checkEveryMs: 5 * MINUTE })).toBe(false);
    // A check more often than the period moves it by at most half the period.
    expect(isDue(ago(4), 10 * MINUTE, now, { checkEveryMs: 60 * MINUTE })).toBe(false);
  });
});

describe("dueForLeads and dueForEvents", () => {
  const databaseUrl = useTestDatabase("cadence");
  let warehouse: Warehouse;

  const checkpoint = (campaignUid: string, stream: string, at: Date | null, account = "acme") => ({
    account,
    campaign_uid: campaignUid,
    stream,
    last_complete_scan_at: at,
    updated_at: now,
  });
  /** A leads walk's checkpoint: complete at `at` (or never), of a campaign then in `scannedStatus`, perhaps restarted since. */
  const walk = (campaignUid: string, at: Date | null, scannedStatus: string, restartedAt: Date | null = null) => ({
    ...checkpoint(campaignUid, "leads", at),
    scan_started_at: restartedAt,
    // A terminal campaign's walks end with its second final walk.
    state: JSON.stringify(scannedStatus === "complete" ? { scannedStatus, terminalWalks: 2 } : { scannedStatus }),
  });

  beforeAll(async () => {
    warehouse = await openMigratedWarehouse(databaseUrl());
    await warehouse.db
      .insertInto("sync_checkpoints")
      .values([
        checkpoint("fresh", "campaign_detail", ago(1)),
        checkpoint("stale", "campaign_detail", ago(20)),
        checkpoint("other-account", "campaign_detail", ago(1), "someone-else"),
        checkpoint("just-finished", "campaign_detail", ago(10)),
        checkpoint("long-finished", "campaign_detail", ago(60)),
        checkpoint("walk-failed", "campaign_detail", ago(1)),
        checkpoint("final-walk-failed", "campaign_detail", ago(1)),
      ])
      .execute();
    await warehouse.db
      .insertInto("sync_checkpoints")
      .values([
        walk("fresh", ago(0.5), "running"),
        walk("stale", ago(19), "running"),
        walk("just-finished", ago(9), "running"),
        // Its final walks, made once it was complete: not repeated, so the detail's reads alone count.
        walk("long-finished", ago(100), "complete"),
        // The detail was read a minute ago, but the walk after it failed: its last complete walk is 20 minutes old.
        walk("walk-failed", ago(20), "running", ago(1)),
        // It finished 30 minutes ago; the walk that was to capture its final state failed half way.
        walk("final-walk-failed", ago(300), "running", ago(1)),
        ...["replies", "link_clicks", "email_opens"].map((stream) => checkpoint("fresh", stream, ago(0.25))),
        ...["replies", "link_clicks"].map((stream) => checkpoint("stale", stream, ago(0.25))),
        checkpoint("stale", "email_opens", ago(3)),
        ...["replies", "link_clicks", "email_opens"].map((stream) => checkpoint("long-finished", stream, ago(60))),
      ])
      .execute();
    const history = (uid: string, status: "running" | "complete", validFrom: Date, validTo: Date | null) => ({
      campaign_uid: uid,
      status,
      valid_from: validFrom,
      valid_to: validTo,
      settings: JSON.stringify({}),
    });
    await warehouse.db
      .insertInto("campaign_history")
      .values([
        history("just-finished", "running", ago(600), ago(3)),
        history("just-finished", "complete", ago(3), null),
        history("long-finished", "complete", ago(120), null),
        history("final-walk-failed", "complete", ago(30), null),
      ])
      .execute();
    const campaign = (uid: string, status: string, started: Date | null) => ({
      uid,
      _account: "acme",
      name: uid,
      workspace_id: 1,
      created_on: ago(10_000),
      status,
      started_running_at: started,
      _observed_at: now,
    });
    await upsert(
      warehouse.db,
      "campaigns",
      [
        campaign("fresh", "running", ago(5_000)),
        campaign("stale", "paused", ago(5_000)),
        campaign("never", "created", null),
        campaign("long-finished", "complete", ago(9_000)),
        campaign("unknown-status", "warming_up", ago(30)),
      ],
      now,
    );
  });

  afterAll(async () => {
    await warehouse.destroy();
  });

  it("judge the leads rhythm from the older of the detail's read and the leads walk, and the time each campaign finished", async () => {
    const due = await dueForLeads(
      warehouse.db,
      "acme",
      [
        { uid: "fresh", status: "running" },
        { uid: "stale", status: "running" },
        { uid: "never", status: "created" },
        { uid: "other-account", status: "running" },
        { uid: "just-finished", status: "complete" },
        { uid: "long-finished", status: "complete" },
        { uid: "walk-failed", status: "running" },
        { uid: "final-walk-failed", status: "complete" },
      ],
      cadence,
      now,
    );
    expect(due.map((campaign) => campaign.uid).sort()).toEqual(["final-walk-failed", "just-finished", "never", "other-account", "stale", "walk-failed"]);
  });

  it("judge the events rhythm from the stalest event stream, and never give it to a campaign that did not start", async () => {
    // stale: its opens are 3 minutes old; unknown-status started but never read its events; long-finished reads them daily.
    expect(await dueForEvents(warehouse.db, "acme", cadence, now)).toEqual(["stale", "unknown-status"]);
    expect(await dueForEvents(warehouse.db, "acme", { ...cadence, eventsEveryMs: undefined }, now)).toEqual([]);
  });

  it("have nothing to judge without campaigns", async () => {
    expect(await dueForLeads(warehouse.db, "acme", [], cadence, now)).toEqual([]);
  });
});
