import { sql } from "kysely";
import { beforeEach, describe, expect, it } from "vitest";
import { upsert } from "../../src/warehouse/upsert.ts";
import { useBackends, useMigratedWarehouse } from "./backends.ts";
import { campaignDetailRow, campaignListingRow } from "./rows.ts";

/** campaign_history versions only states the upstream showed, whichever of a listing page and a detail read lands first. */

const [postgres] = useBackends("history_detail_names");

const T1 = new Date("2024-03-01T12:00:00Z");
const T2 = new Date("2024-03-01T13:00:00Z");
const T3 = new Date("2024-03-01T14:00:00Z");

describe("campaign_history", () => {
  const warehouse = useMigratedWarehouse(postgres!);
  beforeEach(async () => {
    for (const table of ["campaigns", "campaign_sending_domains", "campaign_history"]) await sql`DELETE FROM ${sql.table(table)}`.execute(warehouse().db);
  });
  const history = async () =>
    (await warehouse().db.selectFrom("campaign_history").selectAll().where("campaign_uid", "=", "a").orderBy("valid_from").execute()).map((row) => [
      row.status,
      (row.settings as { name: string }).name,
      (row.settings as { daily_email_limit: number }).daily_email_limit,
    ]);

  it("does so when the listing page brings a new status too, which the listing versions at once", async () => {
    const { db } = warehouse();
    await upsert(db, "campaigns", [campaignDetailRow("a", { _observed_at: T1 })], T1);
    await upsert(db, "campaigns", [campaignListingRow("a", { name: "Renamed", status: "paused", _observed_at: T3 })], T3);
    await upsert(db, "campaigns", [campaignDetailRow("a", { name: "Renamed", status: "paused", daily_email_limit: 80, _observed_at: T2 })], T2);
    expect(await history()).toEqual([
      ["running", "Campaign a", 50],
      ["paused", "Campaign a", 50],
      ["paused", "Renamed", 80],
    ]);
  });

  it("a detail read sent before a listing page but committed after it records no version mixing the old name with the new settings", async () => {
    const { db } = warehouse();
    await upsert(db, "campaigns", [campaignDetailRow("a", { _observed_at: T1 })], T1);
    // One upstream update renamed the campaign and changed its limit. The detail that reads both is sent at T2;
    // a listing page sent at T3 (the new name) is written first, then the detail lands (README: "a detail fetched
    // before a listing page but committed after it still writes its settings").
    await upsert(db, "campaigns", [campaignListingRow("a", { name: "Renamed", _observed_at: T3 })], T3);
    await upsert(db, "campaigns", [campaignDetailRow("a", { name: "Renamed", daily_email_limit: 80, _observed_at: T2 })], T2);
    const held = await db.selectFrom("campaigns").select(["name", "daily_email_limit"]).where("uid", "=", "a").executeTakeFirstOrThrow();
    expect(held).toEqual({ name: "Renamed", daily_email_limit: 80 });
    // Every version is a state the upstream showed: (Campaign a, 50), then (Renamed, 80). Never (Campaign a, 80).
    expect(await history()).toEqual([
      ["running", "Campaign a", 50],
      ["running", "Renamed", 80],
    ]);
  });
});
