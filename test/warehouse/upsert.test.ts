import { sql } from "kysely";
import { beforeEach, describe, expect, it } from "vitest";
import type { Warehouse } from "../../src/warehouse/connect.ts";
import { SYNCED_TABLES, type RowInput } from "../../src/warehouse/tables.ts";
import { markDeleted, recordRejected, upsert, type RejectedRecordInput } from "../../src/warehouse/upsert.ts";
import { useBackends, useMigratedWarehouse } from "./backends.ts";
import {
  campaignDetailRow,
  campaignListingRow,
  contactRow,
  emailSequenceRow,
  leadRow,
  listedReplyRow,
  scheduleRow,
} from "./rows.ts";

const backends = useBackends("upsert");

const T1 = new Date("2024-03-01T12:00:00Z");
const T2 = new Date("2024-03-01T13:00:00Z");
const T3 = new Date("2024-03-01T14:00:00Z");
const T4 = new Date("2024-03-01T15:00:00Z");

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

  it.runIf(backend.name === "postgres")("runs as a statement PostgreSQL prepared once on the connection", async () => {
    await warehouse().db.transaction().execute(async (trx) => {
      await upsert(trx, "leads", leads(2), T1);
      await upsert(trx, "leads", leads(3), T2);
      const { rows } = await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements WHERE statement LIKE '%INSERT INTO "leads"%'`.execute(trx);
      expect(rows).toHaveLength(1);
    });
  });

  it("splits large batches into several statements", async () => {
    const { db } = warehouse();
    expect(await upsert(db, "leads", leads(12_000), T1)).toEqual({ inserted: 12_000, updated: 0 });
    expect(await upsert(db, "leads", leads(12_000), T2)).toEqual({ inserted: 0, updated: 0 });
  });

  it("stores awkward text and JSON exactly as given", async () => {
    const { db } = warehouse();
    const awkward = ['say "hi", {braces} \\ back\\slash', "line\nbreak\ttab", "", "NULL", "  padded  ", "emoji 😀 and ünïcode", 'only " a quote', "only \\ a backslash"];
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

  it("merges duplicate keys that carry different columns in order, whatever their column sets", async () => {
    const { db } = warehouse();
    // Row 7 first with every column, then without email_id (unreadable this time), then bounced alone changes.
    const batch = [contactRow(7, { bounced: false }), { id: 7, bounced: true, unsubscribed: true, _extra: null }, contactRow(8), { id: 7, bounced: false, unsubscribed: true, _extra: null }];
    const given = structuredClone(batch);
    expect(await upsert(db, "contacts", batch, T1)).toEqual({ inserted: 2, updated: 0 });
    const stored = await db.selectFrom("contacts").select(["email_id", "bounced", "unsubscribed"]).where("id", "=", 7).executeTakeFirst();
    expect(stored).toEqual({ email_id: contactRow(7).email_id, bounced: false, unsubscribed: true });
    // The merge works on copies: the caller's rows are as they were given.
    expect(batch).toEqual(given);
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

  it("writes rows that carry different columns, leaving each row's absent columns alone", async () => {
    const { db } = warehouse();
    await upsert(db, "contacts", [contactRow(1), contactRow(2)], T1);
    // Row 2's email could not be read this time: the column is left out, not nulled.
    const mixed = [contactRow(1, { bounced: true }), { id: 2, bounced: true, unsubscribed: false, _extra: null }, { id: 3, bounced: false, unsubscribed: false, _extra: null }];
    expect(await upsert(db, "contacts", mixed, T2)).toEqual({ inserted: 1, updated: 2 });
    const rows = await db.selectFrom("contacts").select(["id", "email_id", "bounced"]).orderBy("id").execute();
    expect(rows).toEqual([
      { id: 1, email_id: contactRow(1).email_id, bounced: true },
      { id: 2, email_id: contactRow(2).email_id, bounced: true },
      { id: 3, email_id: null, bounced: false },
    ]);
  });

  it("lets the newest copy of a schedule or contact decide, in both directions, and never an older one", async () => {
    const { db } = warehouse();
    const lead = { uid: "lead-1", campaign_uid: "c1" };
    const sent = new Date("2024-03-02T09:00:00Z");
    const happened = { reply_received: true, email_opened: true, email_open_count: 3, sent_on: sent, email_opened_on: sent };
    const before = { reply_received: false, email_opened: false, email_open_count: 0, sent_on: null, email_opened_on: null };
    const flags = () => db.selectFrom("schedules").select(["reply_received", "email_opened", "email_open_count", "sent_on", "email_opened_on"]).executeTakeFirstOrThrow();
    await upsert(db, "schedules", [scheduleRow(1, lead, 5, { ...happened, _observed_at: T2 })], T2);
    // A leads page read before the refresh that wrote `happened` (T1), committed after it.
    expect(await upsert(db, "schedules", [scheduleRow(1, lead, 5, { ...before, _observed_at: T1 })], T3)).toEqual({ inserted: 0, updated: 0 });
    expect(await flags()).toEqual(happened);
    // A copy read later, after the upstream took an open back, lowers the count; the same copy again writes nothing.
    const fewer = scheduleRow(1, lead, 5, { ...happened, email_open_count: 2, _observed_at: T3 });
    expect(await upsert(db, "schedules", [fewer], T3)).toEqual({ inserted: 0, updated: 1 });
    expect(await upsert(db, "schedules", [{ ...fewer, _observed_at: T4 }], T4)).toEqual({ inserted: 0, updated: 0 });
    expect((await flags()).email_open_count).toBe(2);

    await upsert(db, "contacts", [contactRow(7, { bounced: true, _observed_at: T2 })], T2);
    await upsert(db, "contacts", [contactRow(7, { bounced: false, _observed_at: T1 })], T3);
    expect((await db.selectFrom("contacts").select("bounced").where("id", "=", 7).executeTakeFirstOrThrow()).bounced).toBe(true);
    await upsert(db, "contacts", [contactRow(7, { bounced: false, _observed_at: T3 })], T3);
    expect((await db.selectFrom("contacts").select("bounced").where("id", "=", 7).executeTakeFirstOrThrow()).bounced).toBe(false);
  });

  it("lets the newest read of a lead decide, its listing or its lookup, and never an older one", async () => {
    const { db } = warehouse();
    const lead = leadRow("lead-1", "c1", 7);
    const sender = () => db.selectFrom("leads").select(["sender_name", "contact_id"]).executeTakeFirstOrThrow();
    // The stale-leads lookup reads the lead at T2; a leads page read at T1 commits after it.
    await upsert(db, "leads", [{ ...lead, sender_name: "Ana Lima", contact_id: 8, _observed_at: T2 }], T2);
    expect(await upsert(db, "leads", [{ ...lead, _observed_at: T1 }], T3)).toEqual({ inserted: 0, updated: 0 });
    expect(await sender()).toEqual({ sender_name: "Ana Lima", contact_id: 8 });
    // A read after both decides, in either direction; the same read again rewrites nothing.
    expect(await upsert(db, "leads", [{ ...lead, _observed_at: T3 }], T3)).toEqual({ inserted: 0, updated: 1 });
    const before = await tuples(warehouse());
    expect(await upsert(db, "leads", [{ ...lead, _observed_at: T4 }], T4)).toEqual({ inserted: 0, updated: 0 });
    expect(await tuples(warehouse())).toEqual(before);
    expect(await sender()).toEqual({ sender_name: "Ana", contact_id: 7 });
  });

  it("lets the newest read of a reply decide the columns its listing and its schedule's copy both carry, each writing its own", async () => {
    const { db } = warehouse();
    const listed = listedReplyRow(1, "c1", 10);
    const { mail_from: _m, subject: _s, ...nested } = { ...listed, lead_uid: "lead-1" };
    const reply = () => db.selectFrom("replies").select(["reply_classification", "lead_uid", "mail_from", "subject", "_observed_at"]).executeTakeFirstOrThrow();
    await upsert(db, "replies", [{ ...listed, reply_classification: "interested", _observed_at: T2 }], T2);
    // A leads page read before the listing (T1), committed after it: its classification is older; its lead_uid is news.
    expect(await upsert(db, "replies", [{ ...nested, _observed_at: T1 }], T3)).toEqual({ inserted: 0, updated: 1 });
    expect(await reply()).toEqual({ reply_classification: "interested", lead_uid: "lead-1", mail_from: "lead@prospect.example", subject: "Re: quick question", _observed_at: T2 });
    // A copy read later decides; a listing read before it and committed after still brings its own columns.
    expect(await upsert(db, "replies", [{ ...nested, reply_classification: "not_interested", _observed_at: T4 }], T4)).toEqual({ inserted: 0, updated: 1 });
    expect(await upsert(db, "replies", [{ ...listed, subject: "Re: a quick question", _observed_at: T3 }], T4)).toEqual({ inserted: 0, updated: 1 });
    expect(await reply()).toEqual({ reply_classification: "not_interested", lead_uid: "lead-1", mail_from: "lead@prospect.example", subject: "Re: a quick question", _observed_at: T4 });
    // Reads that match what is stored write nothing, older or newer.
    expect(await upsert(db, "replies", [{ ...listed, subject: "Re: a quick question", reply_classification: "not_interested", _observed_at: T4 }], T4)).toEqual({ inserted: 0, updated: 0 });
    expect(await upsert(db, "replies", [{ ...nested, _observed_at: T3 }], T4)).toEqual({ inserted: 0, updated: 0 });
  });

  it("rejects rows that lack their key or carry bookkeeping columns", async () => {
    const { db } = warehouse();
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
      const { _synced_at, _first_seen_at, _deleted_at, _field_issues, ...stored } = await db.selectFrom("email_sequences").selectAll().executeTakeFirstOrThrow();
      expect(stored).toEqual(full);
      expect({ _synced_at, _first_seen_at, _deleted_at, _field_issues }).toEqual({ _synced_at: T2, _first_seen_at: T1, _deleted_at: null, _field_issues: null });
    });

    it("field issues: kept per source, replaced by that source's next write, left alone by the others; an issue seen again rewrites nothing", async () => {
      const { db } = warehouse();
      const reply = { id: 7, campaign_uid: "c1", schedule_id: 70, body_plain_text: "Thanks", body_html: "<p>Thanks</p>", received_on: "2024-03-02T10:00:00.123456Z" };
      const unknownClass = { reply_classification: { reason: "not one of the documented values (positive, neutral, negative); kept as text", raw: "out_of_office" } };
      const stored = async () => (await db.selectFrom("replies").select("_field_issues").where("id", "=", 7).executeTakeFirstOrThrow())._field_issues;

      await upsert(db, "replies", [{ ...reply, reply_classification: "out_of_office", _field_issues: unknownClass }], T1, { source: "replies" });
      const firstSeen = { replies: { reply_classification: { ...unknownClass.reply_classification, first_seen_at: expect.any(String) } } };
      expect(await stored()).toEqual(firstSeen);
      const [firstSeenAt] = Object.values((await stored()) as Record<string, Record<string, { first_seen_at: string }>>).map((issues) => issues.reply_classification?.first_seen_at);
      expect(new Date(firstSeenAt ?? "").getTime()).toBe(T1.getTime());

      // The schedule's copy (another source) is clean: it leaves the listing's issue alone.
      expect(await upsert(db, "replies", [{ ...reply, lead_uid: "l1", _field_issues: null }], T2, { source: "leads" })).toEqual({ inserted: 0, updated: 1 });
      expect(await stored()).toEqual(firstSeen);
      // The same issue again: nothing to write, and it keeps the time it was first seen.
      expect(await upsert(db, "replies", [{ ...reply, reply_classification: "out_of_office", _field_issues: unknownClass }], T3, { source: "replies" })).toEqual({
        inserted: 0,
        updated: 0,
      });
      // The listing is fixed upstream: its issue goes.
      await upsert(db, "replies", [{ ...reply, reply_classification: "positive", _field_issues: null }], T3, { source: "replies" });
      expect(await stored()).toBeNull();
    });

    it("a row with field issues needs its source", async () => {
      const { db } = warehouse();
      const row = { id: 8, email_id: "x@example.com", bounced: false, unsubscribed: false, _field_issues: { bounced: { reason: "r", raw: 1 } } };
      await expect(upsert(db, "contacts", [row], T1)).rejects.toThrow(/need their source/);
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

    it("link clicks: a click whose natural key changes under the same id (another precision, another link, two sharing an id) is written, not a failing statement", async () => {
      const { db } = warehouse();
      const click = { id: 77, campaign_uid: "c1", schedule_id: 10, link: "https://example.com/a", clicked_on: "2024-03-02T10:00:00.123456Z" };
      await upsert(db, "link_clicks", [click], T1);
      // The contract keys a click by (schedule_id, link, clicked_on) alone; its id is only filled when known.
      const later = [{ ...click, clicked_on: "2024-03-02T10:00:00.123Z" }, { ...click, link: "https://example.com/b" }, { ...click, schedule_id: 11, id: 77 }];
      expect(await upsert(db, "link_clicks", later, T2)).toEqual({ inserted: 3, updated: 0 });
      const rows = await db.selectFrom("link_clicks").select(["id", "schedule_id", "link"]).orderBy("link_click_key").execute();
      expect(rows.map((row) => row.id)).toEqual([77, 77, 77, 77]);
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

    it("takes a contact with the last live lead that holds it, whichever campaign's, and brings it back with a lead", async () => {
      const { db } = warehouse();
      await upsert(db, "contacts", [contactRow(7), contactRow(8)], T1);
      await upsert(db, "leads", [leadRow("a", "c1", 7), leadRow("b", "c2", 7), leadRow("c", "c1", 8)], T1);
      const contacts = () => db.selectFrom("contacts").select(["id", "_deleted_at"]).orderBy("id").execute();
      await markDeleted(db, "leads", { campaign_uid: "c1" }, [{ uid: "c" }], T2);
      expect(await contacts()).toEqual([{ id: 7, _deleted_at: null }, { id: 8, _deleted_at: null }]);
      await markDeleted(db, "leads", { campaign_uid: "c2" }, [], T3);
      expect(await contacts()).toEqual([{ id: 7, _deleted_at: T3 }, { id: 8, _deleted_at: null }]);
      await upsert(db, "contacts", [contactRow(7)], T4);
      expect(await contacts()).toEqual([{ id: 7, _deleted_at: null }, { id: 8, _deleted_at: null }]);
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
    const rejected = (payload: unknown, changes: Partial<RejectedRecordInput> = {}): RejectedRecordInput => ({
      run_id: null,
      account: "acme",
      stream: "leads",
      campaign_uid: "c1",
      reason: "uid: missing (a key field, so the record cannot be placed)",
      payload,
      record_key: null,
      key_identifies: false,
      parent_key: null,
      skipped: 0,
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

    it("tell apart records whose readable key does not name them alone, and merge those whose key does", async () => {
      const { db } = warehouse();
      const opens = [
        rejected({ schedule_id: 5, opened_on: null, n: 1 }, { stream: "email_opens", record_key: "schedule_id=5" }),
        rejected({ schedule_id: 5, opened_on: null, n: 2 }, { stream: "email_opens", record_key: "schedule_id=5" }),
      ];
      const replies = [
        rejected({ id: 9, schedule_id: null, text: "first" }, { stream: "replies", record_key: "id=9", key_identifies: true }),
        rejected({ id: 9, schedule_id: null, text: "edited" }, { stream: "replies", record_key: "id=9", key_identifies: true }),
      ];
      await recordRejected(db, [...opens, ...replies], T1);
      await recordRejected(db, opens, T2);
      const rows = await db.selectFrom("rejected_records").select(["stream", "payload", "times_seen"]).orderBy("stream").orderBy("id").execute();
      expect(rows).toEqual([
        { stream: "email_opens", payload: { schedule_id: 5, opened_on: null, n: 1 }, times_seen: 2 },
        { stream: "email_opens", payload: { schedule_id: 5, opened_on: null, n: 2 }, times_seen: 2 },
        { stream: "replies", payload: { id: 9, schedule_id: null, text: "edited" }, times_seen: 2 },
      ]);
    });

    it("keep records whose campaign, parent and key are together longer than an index entry, each once", async () => {
      const { db } = warehouse();
      const long = (letter: string) => letter.repeat(1_900);
      const click = (parent: string) =>
        rejected({ link: long("l") }, { stream: "link_clicks", campaign_uid: long("c"), parent_key: parent, record_key: `link=${long("l")}`, key_identifies: true });
      await recordRejected(db, [click(long("p")), click(long("q"))], T1);
      await recordRejected(db, [click(long("p"))], T2);
      const rows = await db.selectFrom("rejected_records").select(["parent_key", "times_seen", "identity"]).orderBy("id").execute();
      expect(rows.map((row) => [row.parent_key, row.times_seen])).toEqual([
        [long("p"), 2],
        [long("q"), 1],
      ]);
      expect(rows.every((row) => row.identity.startsWith("sha:") && row.identity.length < 100)).toBe(true);
    });
  });
});
