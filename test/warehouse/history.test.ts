import { sql } from "kysely";
import pg from "pg";
import { beforeEach, describe, expect, it } from "vitest";
import { upsert, markDeleted } from "../../src/warehouse/upsert.ts";
import { useBackends, useMigratedWarehouse } from "./backends.ts";
import { campaignDetailRow, campaignListingRow, domainRow, workspaceRow } from "./rows.ts";

const backends = useBackends("history");

const T1 = new Date("2024-03-01T12:00:00Z");
const T2 = new Date("2024-03-01T13:00:00Z");
const T3 = new Date("2024-03-01T14:00:00Z");

describe.each(backends)("history triggers on $name", (backend) => {
  const warehouse = useMigratedWarehouse(backend);

  beforeEach(async () => {
    const tables = ["campaigns", "campaign_sending_domains", "workspaces", "domains", "campaign_history", "workspace_history", "domain_history"];
    for (const table of tables) await sql`DELETE FROM ${sql.table(table)}`.execute(warehouse().db);
  });

  const campaignHistory = () =>
    warehouse().db.selectFrom("campaign_history").selectAll().where("campaign_uid", "=", "a").orderBy("valid_from").execute();

  it("open a campaign's history when it is first seen, and add nothing while it does not change", async () => {
    const { db } = warehouse();
    await upsert(db, "campaigns", [campaignListingRow("a")], T1);
    await upsert(db, "campaigns", [campaignListingRow("a")], T2);
    const rows = await campaignHistory();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: "running", valid_to: null });
    expect(rows[0]?.settings).toMatchObject({ name: "Campaign a", daily_email_limit: null, sending_domains: [] });
  });

  it("close the open row and add one on a change of status or settings, but not of other columns", async () => {
    const { db } = warehouse();
    await upsert(db, "campaigns", [campaignDetailRow("a")], T1);
    await upsert(db, "campaigns", [campaignDetailRow("a", { bounces: 40, archived: true })], T2);
    expect(await campaignHistory()).toHaveLength(1);
    await upsert(db, "campaigns", [campaignDetailRow("a", { daily_email_limit: 80 })], T2);
    await upsert(db, "campaigns", [campaignListingRow("a", { status: "paused" })], T3);
    const rows = await campaignHistory();
    expect(rows.map((row) => [row.status, (row.settings as { daily_email_limit: number }).daily_email_limit])).toEqual([
      ["running", 50],
      ["running", 80],
      ["paused", 80],
    ]);
    expect(rows[0]?.valid_to).toEqual(rows[1]?.valid_from);
    expect(rows[1]?.valid_to).toEqual(rows[2]?.valid_from);
    expect(rows[2]?.valid_to).toBeNull();
    expect(rows[2]?.settings).toMatchObject({ skip_days: ["Saturday", "Sunday"], from_time: "09:00:00", forward_netural_emails: true });
  });

  it("follow the campaign's sending domains: one row per changed set, also when a domain goes away", async () => {
    const { db } = warehouse();
    await upsert(db, "campaigns", [campaignDetailRow("a")], T1);
    await upsert(db, "campaign_sending_domains", [{ campaign_uid: "a", domain_id: 2 }, { campaign_uid: "a", domain_id: 1 }], T1);
    await upsert(db, "campaign_sending_domains", [{ campaign_uid: "a", domain_id: 2 }, { campaign_uid: "a", domain_id: 1 }], T2);
    await markDeleted(db, "campaign_sending_domains", { campaign_uid: "a" }, [{ campaign_uid: "a", domain_id: 2 }], T3);
    const rows = await campaignHistory();
    expect(rows.map((row) => (row.settings as { sending_domains: number[] }).sending_domains)).toEqual([[], [1, 2], [2]]);
  });

  it("give two changes in one transaction distinct, chained rows", async () => {
    await warehouse().db.transaction().execute(async (trx) => {
      await upsert(trx, "campaigns", [campaignListingRow("a")], T1);
      await upsert(trx, "campaigns", [campaignListingRow("a", { status: "paused" })], T1);
      await upsert(trx, "campaigns", [campaignListingRow("a", { status: "running" })], T1);
    });
    const rows = await campaignHistory();
    expect(rows.map((row) => row.status)).toEqual(["running", "paused", "running"]);
    // Compared in PostgreSQL: the stamps may lie microseconds apart, below a JavaScript Date's millisecond.
    const chain = await sql<{ distinct_starts: number; chained: number }>`
      SELECT count(DISTINCT valid_from)::int AS distinct_starts,
             count(*) FILTER (WHERE valid_to = (SELECT min(later.valid_from) FROM campaign_history later
                                                 WHERE later.campaign_uid = h.campaign_uid AND later.valid_from > h.valid_from))::int AS chained
        FROM campaign_history h WHERE campaign_uid = 'a'`.execute(warehouse().db);
    expect(chain.rows[0]).toEqual({ distinct_starts: 3, chained: 2 });
  });

  it("record a workspace's credits and counters, not its other fields", async () => {
    const { db } = warehouse();
    await upsert(db, "workspaces", [workspaceRow(1)], T1);
    await upsert(db, "workspaces", [workspaceRow(1, { name: "Renamed", time_zone: "UTC" })], T2);
    await upsert(db, "workspaces", [workspaceRow(1, { name: "Renamed", time_zone: "UTC", credits_remaining: 4_900, total_emails_sent: 1_300 })], T3);
    const rows = await db.selectFrom("workspace_history").selectAll().orderBy("valid_from").execute();
    expect(rows.map((row) => [row.credits_remaining, row.total_emails_sent, row.valid_to === null])).toEqual([
      [5_000, 1_200, false],
      [4_900, 1_300, true],
    ]);
  });

  it("record a domain's setup and warm-up", async () => {
    const { db } = warehouse();
    await upsert(db, "domains", [domainRow(3)], T1);
    await upsert(db, "domains", [domainRow(3, { custom_name: "brand" })], T2);
    await upsert(db, "domains", [domainRow(3, { custom_name: "brand", warmup_days_remaining: 13, warmup_active_days: 1 })], T3);
    const rows = await db.selectFrom("domain_history").select(["warmup_days_remaining", "warmup_active_days"]).orderBy("valid_from").execute();
    expect(rows).toEqual([
      { warmup_days_remaining: 14, warmup_active_days: 0 },
      { warmup_days_remaining: 13, warmup_active_days: 1 },
    ]);
  });

  it.runIf(backend.name === "postgres")("write history whatever the writing session's search_path", async () => {
    const { db } = warehouse();
    await upsert(db, "campaigns", [campaignListingRow("a")], T1);
    const client = new pg.Client({ connectionString: backend.databaseUrl?.(), options: "-c search_path=public" });
    await client.connect();
    try {
      await client.query("UPDATE coldsync.campaigns SET status = 'paused' WHERE uid = 'a'");
    } finally {
      await client.end();
    }
    expect((await campaignHistory()).map((row) => row.status)).toEqual(["running", "paused"]);
  });
});
