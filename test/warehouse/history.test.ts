import { sql } from "kysely";
import pg from "pg";
import { beforeEach, describe, expect, it } from "vitest";
import { up as campaignDeletionHistory } from "../../migrations/0011_campaign_deletion_history.ts";
import { upsert, markDeleted } from "../../src/warehouse/upsert.ts";
import { useBackends, useMigratedWarehouse } from "./backends.ts";
import { campaignDetailRow, campaignListingRow, domainRow, workspaceRow } from "./rows.ts";

const backends = useBackends("history");

const T1 = new Date("2024-03-01T12:00:00Z");
const T2 = new Date("2024-03-01T13:00:00Z");
const T3 = new Date("2024-03-01T14:00:00Z");
const T4 = new Date("2024-03-01T15:00:00Z");

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

  it("version the name with the other settings, by detail reads: a renamed listing alone adds no version, nor one mixing the new name with old settings", async () => {
    const { db } = warehouse();
    await upsert(db, "campaigns", [campaignDetailRow("a", { _observed_at: T1 })], T1);
    // One upstream update renamed the campaign and changed its limit; the listing reads the name first.
    await upsert(db, "campaigns", [campaignListingRow("a", { name: "Renamed", _observed_at: T2 })], T2);
    expect(await campaignHistory()).toHaveLength(1);
    // A status the listing reads is versioned at once, with the settings of the last detail read.
    await upsert(db, "campaigns", [campaignListingRow("a", { name: "Renamed", status: "paused", _observed_at: T3 })], T3);
    await upsert(db, "campaigns", [campaignDetailRow("a", { name: "Renamed", status: "paused", daily_email_limit: 80, _observed_at: T4 })], T4);
    const rows = await campaignHistory();
    expect(rows.map((row) => [row.valid_from, row.status, (row.settings as { name: string }).name, (row.settings as { daily_email_limit: number }).daily_email_limit])).toEqual([
      [T1, "running", "Campaign a", 50],
      [T3, "paused", "Campaign a", 50],
      [T4, "paused", "Renamed", 80],
    ]);
  });

  it("version a listing's rename of a campaign no detail read ever placed: its name has no other source", async () => {
    const { db } = warehouse();
    await upsert(db, "campaigns", [campaignListingRow("a", { _observed_at: T1 })], T1);
    await upsert(db, "campaigns", [campaignListingRow("a", { name: "Renamed", _observed_at: T2 })], T2);
    expect((await campaignHistory()).map((row) => (row.settings as { name: string }).name)).toEqual(["Campaign a", "Renamed"]);
  });

  it("follow the campaign's sending domains: one row per changed set, also when a domain goes away", async () => {
    const { db } = warehouse();
    await upsert(db, "campaigns", [campaignDetailRow("a")], T1);
    await upsert(db, "campaign_sending_domains", [{ campaign_uid: "a", domain_id: 2 }, { campaign_uid: "a", domain_id: 1 }], T1);
    await upsert(db, "campaign_sending_domains", [{ campaign_uid: "a", domain_id: 2 }, { campaign_uid: "a", domain_id: 1 }], T2);
    // A later detail read no longer lists domain 1: it goes, dated by that read's observation (run-lookup.ts).
    const read = new Date("2024-03-01T13:30:00Z");
    await db.transaction().execute(async (trx) => {
      await upsert(trx, "campaigns", [campaignDetailRow("a", { _observed_at: read })], T3);
      await markDeleted(trx, "campaign_sending_domains", { campaign_uid: "a" }, [{ campaign_uid: "a", domain_id: 2 }], read);
    });
    const rows = await campaignHistory();
    expect(rows.map((row) => (row.settings as { sending_domains: number[] }).sending_domains)).toEqual([[], [1, 2], [2]]);
  });

  it("count a sending domain deleted after the campaign's last detail read (its deletion's cascade) as one it still sends from", async () => {
    const { db } = warehouse();
    await upsert(db, "campaigns", [campaignDetailRow("a")], T1);
    await upsert(db, "campaign_sending_domains", [{ campaign_uid: "a", domain_id: 1 }], T1);
    await markDeleted(db, "campaigns", { uid: "a" }, [], T2);
    await markDeleted(db, "campaign_sending_domains", { campaign_uid: "a" }, [], T2);
    // Listed again: the row is live before any detail reads its domains.
    await upsert(db, "campaigns", [campaignListingRow("a", { _observed_at: T3 })], T3);
    const rows = await campaignHistory();
    expect(rows.map((row) => [(row.settings as { sending_domains: number[] }).sending_domains, row.valid_to])).toEqual([
      [[], expect.any(Date)],
      [[1], null],
    ]);
  });

  it("count no domain that a detail read removed before migration 0011, which dated it by the end of its write", async () => {
    const { db } = warehouse();
    const read = new Date("2024-03-01T13:00:00Z");
    await upsert(db, "campaigns", [campaignDetailRow("a", { _observed_at: read })], T2);
    await upsert(db, "campaign_sending_domains", [{ campaign_uid: "a", domain_id: 1 }, { campaign_uid: "a", domain_id: 2 }], T2);
    await markDeleted(db, "campaign_sending_domains", { campaign_uid: "a" }, [{ campaign_uid: "a", domain_id: 2 }], new Date(read.getTime() + 50));
    await campaignDeletionHistory(db as never);
    await upsert(db, "campaigns", [campaignListingRow("a", { status: "paused", _observed_at: T3 })], T3);
    const rows = await campaignHistory();
    expect(rows.at(-1)).toMatchObject({ status: "paused", settings: expect.objectContaining({ sending_domains: [2] }) });
  });

  it("record one state per transaction, the one it ends with, dated by its observation (issue 16, scenario 5)", async () => {
    const observed = new Date("2024-03-01T11:59:00Z");
    await warehouse().db.transaction().execute(async (trx) => {
      await upsert(trx, "campaigns", [campaignListingRow("a", { _observed_at: observed })], T1);
      await upsert(trx, "campaigns", [campaignListingRow("a", { status: "paused", _observed_at: observed })], T1);
      await upsert(trx, "campaigns", [campaignListingRow("a", { status: "running", _observed_at: observed })], T1);
    });
    const rows = await campaignHistory();
    expect(rows.map((row) => [row.status, row.valid_from])).toEqual([["running", observed]]);
  });

  it("record a detail write that changes the status and the sending domains as one state, not its steps", async () => {
    const { db } = warehouse();
    const first = new Date("2024-03-01T11:00:00Z");
    await db.transaction().execute(async (trx) => {
      await upsert(trx, "campaigns", [campaignDetailRow("a", { _observed_at: first })], T1);
      await upsert(trx, "campaign_sending_domains", [{ campaign_uid: "a", domain_id: 5 }], T1);
    });
    const second = new Date("2024-03-01T12:30:00Z");
    await db.transaction().execute(async (trx) => {
      await upsert(trx, "campaigns", [campaignDetailRow("a", { status: "paused", _observed_at: second })], T2);
      await upsert(trx, "campaign_sending_domains", [{ campaign_uid: "a", domain_id: 6 }], T2);
      await markDeleted(trx, "campaign_sending_domains", { campaign_uid: "a" }, [{ campaign_uid: "a", domain_id: 6 }], second);
    });
    const rows = await campaignHistory();
    expect(rows.map((row) => [row.status, (row.settings as { sending_domains: number[] }).sending_domains, row.valid_from])).toEqual([
      ["running", [5], first],
      ["paused", [6], second],
    ]);
  });

  it("never let an older observation overwrite a newer one, nor record it", async () => {
    const { db } = warehouse();
    const listingFetched = new Date("2024-03-01T12:00:00Z");
    const detailFetched = new Date("2024-03-01T12:00:05Z");
    // The detail, fetched after the listing, commits first; the listing's page commits later with what it saw earlier.
    await upsert(db, "campaigns", [campaignDetailRow("a", { status: "paused", _observed_at: detailFetched })], T2);
    const written = await upsert(db, "campaigns", [campaignListingRow("a", { status: "running", _observed_at: listingFetched })], T3);
    expect(written).toEqual({ inserted: 0, updated: 0 });
    const row = await db.selectFrom("campaigns").select(["status", "_observed_at", "_synced_at"]).where("uid", "=", "a").executeTakeFirstOrThrow();
    expect(row).toEqual({ status: "paused", _observed_at: detailFetched, _synced_at: T2 });
    expect((await campaignHistory()).map((history) => history.status)).toEqual(["paused"]);

    // A newer observation that changes nothing moves _observed_at, not _synced_at.
    const later = new Date("2024-03-01T13:00:00Z");
    expect(await upsert(db, "campaigns", [campaignDetailRow("a", { status: "paused", _observed_at: later })], T3)).toEqual({ inserted: 0, updated: 0 });
    expect(await db.selectFrom("campaigns").select(["_observed_at", "_synced_at"]).where("uid", "=", "a").executeTakeFirstOrThrow()).toEqual({
      _observed_at: later,
      _synced_at: T2,
    });
  });

  it("write what only a detail reads even when a listing observed the row later, and never an older detail's", async () => {
    const { db } = warehouse();
    const detailFetched = new Date("2024-03-01T12:00:00Z");
    const listingFetched = new Date("2024-03-01T12:00:05Z");
    await upsert(db, "campaigns", [campaignDetailRow("a", { status: "running", bounces: 1, _observed_at: new Date("2024-03-01T11:00:00Z") })], T1);
    // The listing, fetched after the detail, commits first; the detail commits later with the campaign's end.
    await upsert(db, "campaigns", [campaignListingRow("a", { status: "paused", _observed_at: listingFetched })], T2);
    const ended = { status: "completed", bounces: 4, completed_at: new Date("2024-03-01T11:59:00Z"), daily_email_limit: 80 };
    expect(await upsert(db, "campaigns", [campaignDetailRow("a", { ...ended, _observed_at: detailFetched })], T3)).toEqual({ inserted: 0, updated: 1 });
    const row = await db
      .selectFrom("campaigns")
      .select(["status", "bounces", "completed_at", "daily_email_limit", "_observed_at", "_detail_observed_at", "_synced_at"])
      .where("uid", "=", "a")
      .executeTakeFirstOrThrow();
    expect(row).toEqual({
      status: "paused",
      bounces: 4,
      completed_at: ended.completed_at,
      daily_email_limit: 80,
      _observed_at: listingFetched,
      _detail_observed_at: detailFetched,
      _synced_at: T3,
    });
    expect((await campaignHistory()).map((history) => [history.status, (history.settings as { daily_email_limit: number }).daily_email_limit])).toEqual([
      ["running", 50],
      ["paused", 50],
      ["paused", 80],
    ]);

    // A detail older than the last one changes nothing, and a stale detail never brings a deleted campaign back.
    expect(await upsert(db, "campaigns", [campaignDetailRow("a", { bounces: 2, _observed_at: new Date("2024-03-01T11:30:00Z") })], T4)).toEqual({ inserted: 0, updated: 0 });
    await sql`UPDATE campaigns SET _deleted_at = ${T4}`.execute(db);
    const between = new Date("2024-03-01T12:00:02Z");
    expect(await upsert(db, "campaigns", [campaignDetailRow("a", { ...ended, bounces: 5, _observed_at: between })], T4)).toEqual({ inserted: 0, updated: 1 });
    expect(await db.selectFrom("campaigns").select(["bounces", "_deleted_at"]).where("uid", "=", "a").executeTakeFirstOrThrow()).toEqual({
      bounces: 5,
      _deleted_at: T4,
    });
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
