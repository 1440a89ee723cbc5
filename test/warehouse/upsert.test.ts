import { sql } from "kysely";
import { beforeEach, describe, expect, it } from "vitest";
import type { Warehouse } from "../../src/warehouse/connect.ts";
import { SYNCED_TABLES, type RowInput } from "../../src/warehouse/tables.ts";
import { markDeleted, recordRejected, upsert } from "../../src/warehouse/upsert.ts";
import { useBackends, useMigratedWarehouse } from "./backends.ts";
import {
  campaignDetailRow,
  campaignListingRow,
  contactRow,
  emailSequenceRow,
  leadRow,
  listedReplyRow,
} from "./rows.ts";

const backends = useBackends("upsert");

const T1 = new Date("2024-03-01T12:00:00Z");
const T2 = new Date("2024-03-01T13:00:00Z");
const T3 = new Date("2024-03-01T14:00:00Z");

/** The physical identity of each lead row: a new tuple gets a new ctid and xmin. */
async function tuples(warehouse: Warehouse): Promise<Record<string, string>> {
  const { rows } = await sql<{ uid: string; tuple: string }>`SELECT uid, ctid::text || '/' || xmin::text AS tuple FROM leads`.execute(warehouse.db);
  return Object.fromEntries(rows.map((row) => [row.uid, row.tuple]));
}

describe.each(backends)("upsert on $name", (backend) => {
  const warehouse = useMigratedWarehouse(backend);

  // DELETE, not TRUNCATE: on PostgreSQL a TRUNCATE of many tables costs a quarter second each time.
  beforeEach(async () => {
    for (const table of [...SYNCED_TABLES, "rejected_records", "campaign_history"]) await sql`DELETE FROM ${sql.table(table)}`.execute(warehouse().db);
  });

  const leads = (count: number, campaignUid = "c1") =>
    Array.from({ length: count }, (_, index) => leadRow(`lead-${index}`, campaignUid, 1_000 + index));

  it("inserts new rows, stamping _synced_at and _first_seen_at", async () => {
    const { db } = warehouse();
    expect(await upsert(db, "leads", leads(3), T1)).toEqual({ inserted: 3, updated: 0 });
    const rows = await db.selectFrom("leads").select(["uid", "_synced_at", "_first_seen_at", "_deleted_at"]).orderBy("uid").execute();
    expect(rows).toEqual([0, 1, 2].map((index) => ({ uid: `lead-${index}`, _synced_at: T1, _first_seen_at: T1, _deleted_at: null })));
  });

  it("writes no new tuple when an unchanged batch is replayed", async () => {
    const { db } = warehouse();
    await upsert(db, "leads", leads(50), T1);
    const before = await tuples(warehouse());
    expect(await upsert(db, "leads", leads(50), T2)).toEqual({ inserted: 0, updated: 0 });
    expect(await tuples(warehouse())).toEqual(before);
    const stamps = await db.selectFrom("leads").select("_synced_at").distinct().execute();
    expect(stamps).toEqual([{ _synced_at: T1 }]);
  });

  it("rewrites only the rows that changed and keeps their _first_seen_at", async () => {
    const { db } = warehouse();
    await upsert(db, "leads", leads(5), T1);
    const before = await tuples(warehouse());
    const changed = leads(5).map((row) => (row.uid === "lead-2" ? { ...row, sender_name: "Bea" } : row));
    expect(await upsert(db, "leads", changed, T2)).toEqual({ inserted: 0, updated: 1 });
    const after = await tuples(warehouse());
    expect(Object.keys(after).filter((uid) => after[uid] !== before[uid])).toEqual(["lead-2"]);
    const row = await db.selectFrom("leads").selectAll().where("uid", "=", "lead-2").executeTakeFirstOrThrow();
    expect(row).toMatchObject({ sender_name: "Bea", _synced_at: T2, _first_seen_at: T1 });
  });

  it("splits large batches into several statements", async () => {
    const { db } = warehouse();
    expect(await upsert(db, "leads", leads(12_000), T1)).toEqual({ inserted: 12_000, updated: 0 });
    expect(await upsert(db, "leads", leads(12_000), T2)).toEqual({ inserted: 0, updated: 0 });
  });

  it("stores awkward text and JSON exactly as given", async () => {
    const { db } = warehouse();
    const awkward = ['say "hi", {braces} \\ back\\slash', "line\nbreak\ttab", "", "NULL", "  padded  ", "emoji 😀 and ünïcode"];
    const rows = awkward.map((subject, index) =>
      emailSequenceRow(index + 1, "c1", { subject, body: subject, suggestions: { tips: [subject, null, 3], nested: { quote: '"' } } }),
    );
    rows.push(emailSequenceRow(99, "c1", { subject: null, suggestions: "just a JSON string" }));
    await upsert(db, "email_sequences", rows, T1);
    const stored = await db.selectFrom("email_sequences").select(["id", "subject", "body", "suggestions"]).orderBy("id").execute();
    expect(stored).toEqual(rows.map(({ id, subject, body, suggestions }) => ({ id, subject, body, suggestions })));
    expect(await upsert(db, "email_sequences", rows, T2)).toEqual({ inserted: 0, updated: 0 });
  });

  it("keeps the last of duplicate keys inside one batch", async () => {
    const { db } = warehouse();
    const batch = [contactRow(7, { bounced: false }), contactRow(8), contactRow(7, { bounced: true })];
    expect(await upsert(db, "contacts", batch, T1)).toEqual({ inserted: 2, updated: 0 });
    expect(await db.selectFrom("contacts").select("bounced").where("id", "=", 7).executeTakeFirst()).toEqual({ bounced: true });
  });

  it("treats one instant written two ways as one key", async () => {
    const { db } = warehouse();
    const click = { campaign_uid: "c1", schedule_id: 9, link: "https://example.com/demo" };
    const batch = [
      { ...click, clicked_on: "2024-03-02T10:00:00Z" },
      { ...click, clicked_on: new Date("2024-03-02T10:00:00.000Z") },
      { ...click, clicked_on: "2024-03-02T12:00:00+02:00" },
    ];
    expect(await upsert(db, "link_clicks", batch, T1)).toEqual({ inserted: 1, updated: 0 });
  });

  it("rejects batches whose rows disagree on columns, lack their key, or carry bookkeeping columns", async () => {
    const { db } = warehouse();
    const mixed = [contactRow(1), { id: 2, email_id: "x@example.com", bounced: false, unsubscribed: false }];
    await expect(upsert(db, "contacts", mixed, T1)).rejects.toThrow(/same columns/);
    await expect(upsert(db, "contacts", [{ email_id: "x@example.com" } as RowInput<"contacts">], T1)).rejects.toThrow(/natural key id/);
    await expect(upsert(db, "contacts", [{ ...contactRow(1), _deleted_at: null } as RowInput<"contacts">], T1)).rejects.toThrow(/_deleted_at/);
  });

  describe("merges partial rows from two sources", () => {
    it("campaigns: the listing never nulls the settings the retrieve wrote, in either order", async () => {
      const { db } = warehouse();
      await upsert(db, "campaigns", [campaignListingRow("a")], T1);
      await upsert(db, "campaigns", [campaignDetailRow("a"), campaignDetailRow("b")], T2);
      expect(await upsert(db, "campaigns", [campaignListingRow("a", { status: "paused" }), campaignListingRow("b")], T3)).toEqual({
        inserted: 0,
        updated: 1,
      });
      const rows = await db.selectFrom("campaigns").selectAll().orderBy("uid").execute();
      const { _account: _a, ...expectedA } = campaignDetailRow("a", { status: "paused" });
      expect(rows[0]).toMatchObject({ ...expectedA, _synced_at: T3, _first_seen_at: T1 });
      expect(rows[1]).toMatchObject({ daily_email_limit: 50, skip_days: ["Saturday", "Sunday"], from_time: "09:00:00", _synced_at: T2 });
    });

    it("replies: the listing brings mail_from and subject, a schedule's copy brings lead_uid", async () => {
      const { db } = warehouse();
      const listed = listedReplyRow(1, "c1", 10);
      const { mail_from: _m, subject: _s, ...nested } = { ...listed, lead_uid: "lead-1" };
      await upsert(db, "replies", [listed, { ...listed, id: 2 }], T1);
      await upsert(db, "replies", [nested, { ...nested, id: 2 }, { ...nested, id: 3 }], T2);
      await upsert(db, "replies", [{ ...listed, id: 3 }], T3);
      const rows = await db.selectFrom("replies").select(["id", "lead_uid", "mail_from", "subject"]).orderBy("id").execute();
      expect(rows).toEqual([1, 2, 3].map((id) => ({ id, lead_uid: "lead-1", mail_from: "lead@prospect.example", subject: "Re: quick question" })));
    });

    it("email sequences: a schedule's email_data leaves what #9 told alone", async () => {
      const { db } = warehouse();
      const full = emailSequenceRow(5, "c1");
      const fromSchedule = { id: 5, campaign_uid: "c1", subject: full.subject, body: full.body, email_content_type: full.email_content_type };
      await upsert(db, "email_sequences", [fromSchedule], T1);
      await upsert(db, "email_sequences", [full], T2);
      expect(await upsert(db, "email_sequences", [fromSchedule], T3)).toEqual({ inserted: 0, updated: 0 });
      const { _synced_at, _first_seen_at, _deleted_at, ...stored } = await db.selectFrom("email_sequences").selectAll().executeTakeFirstOrThrow();
      expect(stored).toEqual(full);
      expect({ _synced_at, _first_seen_at, _deleted_at }).toEqual({ _synced_at: T2, _first_seen_at: T1, _deleted_at: null });
    });

    it("link clicks: a listing row (no id) never clears the id a schedule's copy gave", async () => {
      const { db } = warehouse();
      const listed = { campaign_uid: "c1", schedule_id: 10, link: "https://example.com/a", clicked_on: new Date("2024-03-02T10:00:00Z") };
      const other = { ...listed, link: "https://example.com/b" };
      await upsert(db, "link_clicks", [listed], T1);
      expect(await upsert(db, "link_clicks", [{ ...listed, id: 501 }, { ...other, id: 502 }], T2)).toEqual({ inserted: 1, updated: 1 });
      expect(await upsert(db, "link_clicks", [listed, other], T3)).toEqual({ inserted: 0, updated: 0 });
      expect(await upsert(db, "link_clicks", [{ ...listed, id: null }], T3)).toEqual({ inserted: 0, updated: 0 });
      const rows = await db.selectFrom("link_clicks").select(["link", "id"]).orderBy("link").execute();
      expect(rows).toEqual([
        { link: "https://example.com/a", id: 501 },
        { link: "https://example.com/b", id: 502 },
      ]);
    });

    it("_extra: unknown fields of several sources accumulate; null adds nothing", async () => {
      const { db } = warehouse();
      await upsert(db, "campaigns", [{ ...campaignListingRow("a"), _extra: { listing_only: 1 } }], T1);
      await upsert(db, "campaigns", [campaignDetailRow("a", { _extra: { settings: { beta: true } } })], T2);
      expect(await upsert(db, "campaigns", [campaignDetailRow("a", { _extra: null })], T3)).toEqual({ inserted: 0, updated: 0 });
      const row = await db.selectFrom("campaigns").select("_extra").executeTakeFirstOrThrow();
      expect(row._extra).toEqual({ listing_only: 1, settings: { beta: true } });
    });
  });

  describe("soft delete", () => {
    it("marks the rows of the scope that the scan did not return, once, and leaves other scopes alone", async () => {
      const { db } = warehouse();
      await upsert(db, "leads", [...leads(4, "c1"), leadRow("other", "c2", 99)], T1);
      const kept = [{ uid: "lead-0" }, { uid: "lead-2" }];
      expect(await markDeleted(db, "leads", { campaign_uid: "c1" }, kept, T2)).toBe(2);
      expect(await markDeleted(db, "leads", { campaign_uid: "c1" }, kept, T3)).toBe(0);
      const rows = await db.selectFrom("leads").select(["uid", "_deleted_at"]).orderBy("uid").execute();
      expect(rows).toEqual([
        { uid: "lead-0", _deleted_at: null },
        { uid: "lead-1", _deleted_at: T2 },
        { uid: "lead-2", _deleted_at: null },
        { uid: "lead-3", _deleted_at: T2 },
        { uid: "other", _deleted_at: null },
      ]);
    });

    it("compares composite keys, timestamps by instant", async () => {
      const { db } = warehouse();
      const open = (opened_on: string) => ({ campaign_uid: "c1", schedule_id: 10, opened_on });
      await upsert(db, "email_opens", [open("2024-03-02T10:00:00Z"), open("2024-03-02T11:00:00Z")], T1);
      const kept = [{ schedule_id: 10, opened_on: "2024-03-02T12:00:00+02:00" }];
      expect(await markDeleted(db, "email_opens", { campaign_uid: "c1" }, kept, T2)).toBe(1);
      const live = await db.selectFrom("email_opens").select("opened_on").where("_deleted_at", "is", null).execute();
      expect(live).toEqual([{ opened_on: new Date("2024-03-02T10:00:00Z") }]);
    });

    it("empties the scope when nothing is kept", async () => {
      const { db } = warehouse();
      await upsert(db, "campaign_sending_domains", [{ campaign_uid: "c1", domain_id: 1 }, { campaign_uid: "c1", domain_id: 2 }], T1);
      expect(await markDeleted(db, "campaign_sending_domains", { campaign_uid: "c1" }, [], T2)).toBe(2);
    });

    it("is undone when the record comes back, even unchanged", async () => {
      const { db } = warehouse();
      await upsert(db, "leads", leads(2), T1);
      await markDeleted(db, "leads", { campaign_uid: "c1" }, [{ uid: "lead-0" }], T2);
      expect(await upsert(db, "leads", leads(2), T3)).toEqual({ inserted: 0, updated: 1 });
      const row = await db.selectFrom("leads").selectAll().where("uid", "=", "lead-1").executeTakeFirstOrThrow();
      expect(row).toMatchObject({ _deleted_at: null, _synced_at: T3, _first_seen_at: T1 });
      // Key-only tables come back too.
      await upsert(db, "campaign_sending_domains", [{ campaign_uid: "c1", domain_id: 1 }], T1);
      await markDeleted(db, "campaign_sending_domains", { campaign_uid: "c1" }, [], T2);
      expect(await upsert(db, "campaign_sending_domains", [{ campaign_uid: "c1", domain_id: 1 }], T3)).toEqual({ inserted: 0, updated: 1 });
    });
  });

  describe("rejected records", () => {
    const rejected = (payload: unknown, changes: Partial<{ run_id: number | null; stream: string; reason: string }> = {}) => ({
      run_id: null,
      account: "acme",
      stream: "leads",
      campaign_uid: "c1",
      reason: "contact.email_id: expected string",
      payload,
      ...changes,
    });

    it("keep one row per payload: a replayed page bumps times_seen and last_seen_at only", async () => {
      const { db } = warehouse();
      const page = [rejected({ uid: "l1", contact: null }), rejected({ uid: "l2", contact: 5 })];
      await recordRejected(db, page, T1);
      await recordRejected(db, [rejected({ contact: null, uid: "l1" }), rejected({ uid: "l2", contact: 5 })], T2);
      const rows = await db
        .selectFrom("rejected_records")
        .select(["payload", "times_seen", "first_seen_at", "last_seen_at"])
        .orderBy("id")
        .execute();
      expect(rows).toEqual([
        { payload: { uid: "l1", contact: null }, times_seen: 2, first_seen_at: T1, last_seen_at: T2 },
        { payload: { uid: "l2", contact: 5 }, times_seen: 2, first_seen_at: T1, last_seen_at: T2 },
      ]);
    });

    it("count copies inside one batch, and keep streams apart", async () => {
      const { db } = warehouse();
      await recordRejected(db, [rejected("oops"), rejected("oops"), rejected("oops", { stream: "replies" }), rejected(null)], T1);
      const rows = await db.selectFrom("rejected_records").select(["stream", "payload", "times_seen"]).orderBy("stream").orderBy("times_seen").execute();
      expect(rows).toEqual([
        { stream: "leads", payload: null, times_seen: 1 },
        { stream: "leads", payload: "oops", times_seen: 2 },
        { stream: "replies", payload: "oops", times_seen: 1 },
      ]);
    });
  });
});
