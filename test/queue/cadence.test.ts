import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dueCampaigns, isDue, type Cadence } from "../../src/queue/cadence.ts";
import type { Warehouse } from "../../src/warehouse/connect.ts";
import { useTestDatabase } from "../support/database.ts";
import { openMigratedWarehouse } from "./warehouse.ts";

const MINUTE = 60_000;
const cadence: Cadence = { activeEveryMs: 15 * MINUTE, idleEveryMs: 60 * MINUTE, terminalEveryMs: 24 * 60 * MINUTE };
const now = new Date("2026-03-01T12:00:00Z");
const ago = (minutes: number) => new Date(now.getTime() - minutes * MINUTE);

describe("isDue", () => {
  it("follows the cadence of the campaign's status", () => {
    expect(isDue({ uid: "a", status: "running" }, { lastSyncedAt: ago(14), statusSince: undefined }, cadence, now)).toBe(false);
    expect(isDue({ uid: "a", status: "paused" }, { lastSyncedAt: ago(15), statusSince: undefined }, cadence, now)).toBe(true);
    expect(isDue({ uid: "a", status: "scheduled" }, { lastSyncedAt: ago(30), statusSince: undefined }, cadence, now)).toBe(false);
    expect(isDue({ uid: "a", status: "created" }, { lastSyncedAt: ago(61), statusSince: undefined }, cadence, now)).toBe(true);
    expect(isDue({ uid: "a", status: "cancelled" }, { lastSyncedAt: ago(600), statusSince: ago(700) }, cadence, now)).toBe(false);
  });

  it("takes a campaign that was never synced, or finished after its last sync, at once", () => {
    expect(isDue({ uid: "a", status: "complete" }, { lastSyncedAt: undefined, statusSince: undefined }, cadence, now)).toBe(true);
    expect(isDue({ uid: "a", status: "complete" }, { lastSyncedAt: ago(2), statusSince: ago(1) }, cadence, now)).toBe(true);
    expect(isDue({ uid: "a", status: "failed" }, { lastSyncedAt: ago(2), statusSince: ago(1) }, cadence, now)).toBe(true);
  });
});

describe("dueCampaigns", () => {
  const databaseUrl = useTestDatabase("cadence");
  let warehouse: Warehouse;

  beforeAll(async () => {
    warehouse = await openMigratedWarehouse(databaseUrl());
    const run = (scope: string, startedAt: Date, outcome: "succeeded" | "failed", account = "acme") => ({
      account,
      scope,
      trigger: "worker" as const,
      started_at: startedAt,
      finished_at: startedAt,
      outcome,
    });
    await warehouse.db
      .insertInto("sync_runs")
      .values([
        run("fresh", ago(1), "succeeded"),
        run("stale", ago(20), "succeeded"),
        run("stale", ago(5), "failed"),
        run("other-account", ago(1), "succeeded", "someone-else"),
        run("just-finished", ago(10), "succeeded"),
        run("long-finished", ago(60), "succeeded"),
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
      ])
      .execute();
  });

  afterAll(async () => {
    await warehouse.destroy();
  });

  it("judges from the account's last succeeded run and the time each campaign finished", async () => {
    const due = await dueCampaigns(
      warehouse.db,
      "acme",
      [
        { uid: "fresh", status: "running" },
        { uid: "stale", status: "running" },
        { uid: "never", status: "created" },
        { uid: "other-account", status: "running" },
        { uid: "just-finished", status: "complete" },
        { uid: "long-finished", status: "complete" },
      ],
      cadence,
      now,
    );
    expect(due.map((campaign) => campaign.uid).sort()).toEqual(["just-finished", "never", "other-account", "stale"]);
  });

  it("has nothing to judge without campaigns", async () => {
    expect(await dueCampaigns(warehouse.db, "acme", [], cadence, now)).toEqual([]);
  });
});
