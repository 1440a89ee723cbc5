import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { campaignLag } from "../../src/sync/status.ts";
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
  const campaign = (uid: string, status: "running" | "complete") => ({ uid, _account: "acme", name: uid, workspace_id: 1, created_on: minutesAgo(10_000), status });
  await upsert(warehouse.db, "campaigns", [campaign("active", "running"), campaign("done", "complete"), campaign("new", "running")], now);
  const checkpoints = [
    ...["campaign_detail", "replies", "link_clicks", "email_opens", "email_sequences"].flatMap((stream) => [
      { campaign_uid: "active", stream, at: minutesAgo(5) },
      { campaign_uid: "done", stream, at: minutesAgo(5) },
    ]),
    { campaign_uid: "active", stream: "leads", at: minutesAgo(30) },
    { campaign_uid: "done", stream: "leads", at: minutesAgo(9_000) },
    { campaign_uid: "new", stream: "leads", at: null },
  ];
  await warehouse.db
    .insertInto("sync_checkpoints")
    .values(checkpoints.map(({ campaign_uid, stream, at }) => ({ account: "acme", campaign_uid, stream, last_complete_scan_at: at, updated_at: now })))
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

  it("leaves out a terminal campaign's leads, which had their final scan", async () => {
    const lags = await campaignLag(warehouse.db, "acme", now);
    expect(lags.get("done")?.lagSeconds).toBe(5 * 60);
  });

  it("is unknown while a stream never completed", async () => {
    const lags = await campaignLag(warehouse.db, "acme", now);
    expect(lags.get("new")?.lagSeconds).toBeNull();
  });
});
