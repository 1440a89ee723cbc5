import { sql } from "kysely";
import { beforeEach, describe, expect, it } from "vitest";
import { up as historyDatedByNewestRead } from "../../migrations/0022_history_dated_by_newest_read.ts";
import { upsert } from "../../src/warehouse/upsert.ts";
import { useBackends, useMigratedWarehouse } from "./backends.ts";
import { campaignDetailRow, campaignListingRow } from "./rows.ts";

/**
 * A campaign detail (#2) whose `status` could not be read (drift: null, missing) is written without its status
 * (withoutUnreadable) and moves only `_detail_observed_at` (upsert-statement.ts FULL_READS.observedWith): a
 * listing page read before it may still land its status. Its settings are dated by its own read (migrations/0022;
 * they were dated by the read before it), and its name is not written back by an older listing page.
 */

const backends = useBackends("history_unread_status");

const T1 = new Date("2024-03-01T12:00:00Z");
const T2 = new Date("2024-03-01T13:00:00Z");
const T3 = new Date("2024-03-01T14:00:00Z");

describe.each(backends)("campaign_history after a detail whose status could not be read, on $name", (backend) => {
  const warehouse = useMigratedWarehouse(backend);
  beforeEach(async () => {
    for (const table of ["campaigns", "campaign_sending_domains", "campaign_history"]) await sql`DELETE FROM ${sql.table(table)}`.execute(warehouse().db);
  });
  const history = async () =>
    (await warehouse().db.selectFrom("campaign_history").selectAll().where("campaign_uid", "=", "a").orderBy("valid_from").execute()).map((row) => ({
      valid_from: row.valid_from,
      valid_to: row.valid_to,
      name: (row.settings as { name: string }).name,
      daily_email_limit: (row.settings as { daily_email_limit: number }).daily_email_limit,
    }));

  it("dates the settings it observed by its own observation, not by the previous one", async () => {
    const { db } = warehouse();
    await upsert(db, "campaigns", [campaignDetailRow("a", { _observed_at: T1 })], T1);
    // At T3 a detail read sees the limit changed to 80; its status deviated and is left out of the row.
    await upsert(db, "campaigns", [campaignDetailRow("a", { status: undefined, daily_email_limit: 80, _observed_at: T3 })], T3);
    // The limit was 50 as late as T1 and 80 at T3: nothing observed it at 80 before T3.
    expect(await history()).toEqual([
      { valid_from: T1, valid_to: T3, name: "Campaign a", daily_email_limit: 50 },
      { valid_from: T3, valid_to: null, name: "Campaign a", daily_email_limit: 80 },
    ]);
  });

  it("never lets an older listing page put the old name back beside the newer detail's settings", async () => {
    const { db } = warehouse();
    await upsert(db, "campaigns", [campaignDetailRow("a", { _observed_at: T1 })], T1);
    // One upstream update renames the campaign and raises its limit, between T2 and T3. A listing page sent at
    // T2 (old name) is in flight while a detail sent at T3 (new name, new limit; status unreadable) lands first.
    await upsert(db, "campaigns", [campaignDetailRow("a", { status: undefined, name: "Renamed", daily_email_limit: 80, _observed_at: T3 })], T3);
    await upsert(db, "campaigns", [campaignListingRow("a", { name: "Campaign a", _observed_at: T2 })], T3);
    // The row keeps the newest read's name.
    expect.soft(await db.selectFrom("campaigns").select(["name", "daily_email_limit"]).where("uid", "=", "a").executeTakeFirstOrThrow()).toEqual({
      name: "Renamed",
      daily_email_limit: 80,
    });
    // Every version is a state the upstream showed: (Campaign a, 50), then (Renamed, 80); never (Campaign a, 80).
    expect.soft((await history()).map((version) => [version.name, version.daily_email_limit])).toEqual([
      ["Campaign a", 50],
      ["Renamed", 80],
    ]);
  });

  it("moves versions a warehouse dated before the detail read they hold to that read, once (migrations/0022)", async () => {
    const { db } = warehouse();
    await upsert(db, "campaigns", [campaignDetailRow("a", { _observed_at: T1 })], T1);
    const micro = (at: Date, micros: number) => sql<Date>`${at}::timestamptz + make_interval(secs => ${micros / 1e6})`;
    // What the history held before: the new limit dated a microsecond after T1 though read at T3, and a status
    // change a listing read at T2 landed after it, a microsecond later.
    await sql`DELETE FROM campaign_history`.execute(db);
    await sql`INSERT INTO campaign_history (campaign_uid, valid_from, valid_to, status, settings, detail_observed_at) VALUES
      ('a', ${T1}, ${micro(T1, 1)}, 'running', '{"name": "Campaign a", "daily_email_limit": 50}', ${T1}),
      ('a', ${micro(T1, 1)}, ${micro(T1, 2)}, 'running', '{"name": "Campaign a", "daily_email_limit": 80}', ${T3}),
      ('a', ${micro(T1, 2)}, NULL, 'paused', '{"name": "Campaign a", "daily_email_limit": 80}', ${T3})`.execute(db);
    await historyDatedByNewestRead(db as never);
    // Microseconds from T3 (JavaScript dates hold milliseconds).
    const { rows } = await sql<{ status: string; from: number; to: number | null }>`
      SELECT status, (extract(epoch FROM valid_from - ${T3}) * 1e6)::float8 AS from, (extract(epoch FROM valid_to - ${T3}) * 1e6)::float8 AS to
        FROM campaign_history WHERE campaign_uid = 'a' ORDER BY valid_from`.execute(db);
    expect(rows).toEqual([
      { status: "running", from: -2 * 3_600e6, to: 0 },
      { status: "running", from: 0, to: 1 },
      { status: "paused", from: 1, to: null },
    ]);
  });
});
