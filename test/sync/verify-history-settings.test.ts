import { sql } from "kysely";
import { beforeEach, describe, expect, it } from "vitest";
import { historyLines } from "../../src/sync/verify-history.ts";
import { upsert } from "../../src/warehouse/upsert.ts";
import { useBackends, useMigratedWarehouse } from "../warehouse/backends.ts";
import { ACCOUNT, campaignDetailRow } from "../warehouse/rows.ts";

/**
 * verify's history lines compare a live campaign's open campaign_history row with the row. Only the name of the
 * open version's settings may differ from the row's (it merges the listing's name with the detail's); every other
 * setting is the row's own (migrations 0012, 0020), so damage to them (a restore of an older campaign_history, a
 * hand edit) is named.
 */

const [postgres] = useBackends("verify_history_settings");

const T1 = new Date("2024-03-01T12:00:00Z");
const T2 = new Date("2024-03-01T13:00:00Z");

describe("verify's campaign_history line", () => {
  const warehouse = useMigratedWarehouse(postgres!);
  beforeEach(async () => {
    for (const table of ["campaigns", "campaign_sending_domains", "campaign_history"]) await sql`DELETE FROM ${sql.table(table)}`.execute(warehouse().db);
  });

  it("names a campaign whose open version holds other settings than the campaign (not its name)", async () => {
    const { db } = warehouse();
    await upsert(db, "campaigns", [campaignDetailRow("a", { daily_email_limit: 50, _observed_at: T1 })], T1);
    await upsert(db, "campaigns", [campaignDetailRow("a", { daily_email_limit: 80, _observed_at: T2 })], T2);
    expect(await historyLines(db, ACCOUNT, undefined)).toEqual([]);
    // Damage: the open version says 50 again (a campaign_history restored from before the change, rows kept).
    await sql`UPDATE campaign_history SET settings = jsonb_set(settings, '{daily_email_limit}', '50') WHERE campaign_uid = 'a' AND valid_to IS NULL`.execute(db);
    const lines = await historyLines(db, ACCOUNT, undefined);
    expect(lines.map((line) => [line.table, line.status, line.columns])).toEqual([["campaign_history", "differs", { settings: 1 }]]);
  });

  it("leaves the name alone, which may be the listing's, and names sending domains the version does not hold", async () => {
    const { db } = warehouse();
    await upsert(db, "campaigns", [campaignDetailRow("a", { _observed_at: T1 })], T1);
    await sql`UPDATE campaign_history SET settings = jsonb_set(settings, '{name}', '"Another name"') WHERE campaign_uid = 'a' AND valid_to IS NULL`.execute(db);
    expect(await historyLines(db, ACCOUNT, undefined)).toEqual([]);
    await sql`UPDATE campaign_history SET settings = jsonb_set(settings, '{sending_domains}', '[999]') WHERE campaign_uid = 'a' AND valid_to IS NULL`.execute(db);
    expect((await historyLines(db, ACCOUNT, undefined)).map((line) => line.columns)).toEqual([{ settings: 1 }]);
  });
});
