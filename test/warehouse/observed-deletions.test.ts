import { sql } from "kysely";
import { beforeEach, describe, expect, it } from "vitest";
import { writeRows } from "../../src/sync/page-writer.ts";
import { SYNCED_TABLES } from "../../src/warehouse/tables.ts";
import { markDeletedKeys } from "../../src/warehouse/mark-deleted.ts";
import { markDeleted, upsert } from "../../src/warehouse/upsert.ts";
import { useBackends, useMigratedWarehouse } from "./backends.ts";
import { contactRow, leadRow, listedReplyRow } from "./rows.ts";

/** A deletion among the reads a row orders by observation time (`_observed_at`), at the statement level, on both backends. */

const backends = useBackends("observed_deletions");

const T1 = new Date("2024-03-01T12:00:00Z");
const T2 = new Date("2024-03-01T13:00:00Z");
const T3 = new Date("2024-03-01T14:00:00Z");
const T4 = new Date("2024-03-01T15:00:00Z");

const LEAD_COPIES = ["replies", "link_clicks", "email_sequences"] as const;

describe.each(backends)("observation order on $name", (backend) => {
  const warehouse = useMigratedWarehouse(backend);

  beforeEach(async () => {
    for (const table of [...SYNCED_TABLES, "rejected_records", "campaign_history"]) await sql`DELETE FROM ${sql.table(table)}`.execute(warehouse().db);
  });

  it("a reply listing read older than the reply's newest read does not bring the soft-deleted reply back (as for a lead)", async () => {
    const { db } = warehouse();
    // Lead: newest read T2, soft-deleted at T3, a read made at T1 lands afterwards: stays deleted.
    await upsert(db, "leads", [{ ...leadRow("lead-1", "c1", 7), _observed_at: T2 }], T2);
    await markDeleted(db, "leads", { campaign_uid: "c1" }, [], T3);
    await upsert(db, "leads", [{ ...leadRow("lead-1", "c1", 7), _observed_at: T1 }], T4);
    const lead = await db.selectFrom("leads").select("_deleted_at").executeTakeFirstOrThrow();
    expect(lead._deleted_at).toEqual(T3);

    // Reply: the same sequence of reads (listing at T2, deletion at T3, listing read at T1 landing last).
    await upsert(db, "replies", [{ ...listedReplyRow(1, "c1", 10), _observed_at: T2 }], T2, { source: "replies" });
    await markDeleted(db, "replies", { campaign_uid: "c1" }, [], T3);
    const result = await upsert(db, "replies", [{ ...listedReplyRow(1, "c1", 10), _observed_at: T1 }], T4, { source: "replies" });
    const reply = await db.selectFrom("replies").select(["_deleted_at", "_synced_at", "_observed_at"]).executeTakeFirstOrThrow();
    expect({ result, reply }).toEqual({ result: { inserted: 0, updated: 0 }, reply: { _deleted_at: T3, _synced_at: T2, _observed_at: T2 } });
  });

  it("a deletion is dated by the read that found the row gone: a read made before it never brings the row back, one made after it does", async () => {
    const { db } = warehouse();
    const T2_30 = new Date("2024-03-01T13:30:00Z");
    await upsert(db, "leads", [{ ...leadRow("lead-1", "c1", 7), _observed_at: T1 }], T1);
    await upsert(db, "replies", [{ ...listedReplyRow(1, "c1", 10), _observed_at: T1 }], T1, { source: "replies" });
    // A walk started at T2 found both gone, and committed at T3.
    for (const table of ["leads", "replies"] as const) await markDeleted(db, table, { campaign_uid: "c1" }, [], T3, undefined, T2);
    // A read requested at 12:30 (after the rows last changed, before the walk started) lands last: it stays out.
    const older = new Date("2024-03-01T12:30:00Z");
    await upsert(db, "leads", [{ ...leadRow("lead-1", "c1", 7), _observed_at: older }], T4);
    await upsert(db, "replies", [{ ...listedReplyRow(1, "c1", 10), _observed_at: older }], T4, { source: "replies" });
    const deleted = async () => [
      (await db.selectFrom("leads").select("_deleted_at").executeTakeFirstOrThrow())._deleted_at,
      (await db.selectFrom("replies").select("_deleted_at").executeTakeFirstOrThrow())._deleted_at,
    ];
    expect(await deleted()).toEqual([T3, T3]);
    // One requested at 13:30 saw them listed after the walk started: they are back.
    await upsert(db, "leads", [{ ...leadRow("lead-1", "c1", 7), _observed_at: T2_30 }], T4);
    await upsert(db, "replies", [{ ...listedReplyRow(1, "c1", 10), _observed_at: T2_30 }], T4, { source: "replies" });
    expect(await deleted()).toEqual([null, null]);
  });

  it("a leads page read before another campaign's lead let go of a shared contact still leaves that contact live while its new lead holds it", async () => {
    const { db } = warehouse();
    const leadsSource = { name: "leads", copiesInto: [...LEAD_COPIES] };
    const page = (campaign: string, uid: string, contact: number, observedAt: Date, contactChanges = {}) => ({
      contacts: [{ ...contactRow(contact, contactChanges), _observed_at: observedAt }],
      leads: [{ ...leadRow(uid, campaign, contact), _observed_at: observedAt }],
    });
    // Campaign c1: lead a holds contact 7, first read at T0-ish, then read at T2 with the contact bounced.
    await db.transaction().execute((trx) => writeRows(trx, page("c1", "a", 7, new Date("2024-03-01T11:00:00Z")), T1, leadsSource));
    await db.transaction().execute((trx) => writeRows(trx, page("c1", "a", 7, T2, { bounced: true }), T2, leadsSource));
    // T3: lead a is read pointing at another contact; contact 7 is held by no live lead and is retired (0016).
    await db.transaction().execute((trx) => writeRows(trx, page("c1", "a", 8, T3), T3, leadsSource));
    expect((await db.selectFrom("contacts").select("_deleted_at").where("id", "=", 7).executeTakeFirstOrThrow())._deleted_at).not.toBeNull();
    // Campaign c2's leads page was requested at T1 (before T2) and lands now: its new lead b holds contact 7.
    await db.transaction().execute((trx) => writeRows(trx, page("c2", "b", 7, T1), T4, leadsSource));

    const holder = await db.selectFrom("leads").select(["contact_id", "_deleted_at"]).where("uid", "=", "b").executeTakeFirstOrThrow();
    expect(holder).toEqual({ contact_id: 7, _deleted_at: null });
    // docs/warehouse.md: a contact lives while a lead holds it; any live lead written holding it brings it back.
    const contact = await db.selectFrom("contacts").select(["id", "bounced", "_deleted_at"]).where("id", "=", 7).executeTakeFirstOrThrow();
    expect(contact).toEqual({ id: 7, bounced: true, _deleted_at: null });
  });

  it("a live lead updated to hold a retired contact brings it back, with no read of the contact", async () => {
    const { db } = warehouse();
    await upsert(db, "contacts", [{ ...contactRow(7), _observed_at: T1 }, { ...contactRow(8), _observed_at: T1 }], T1);
    await upsert(db, "leads", [{ ...leadRow("a", "c1", 7), _observed_at: T1 }, { ...leadRow("b", "c1", 8), _observed_at: T1 }], T1);
    // Lead a lets go of contact 7, which no live lead holds any more: retired.
    await upsert(db, "leads", [{ ...leadRow("a", "c1", 8), _observed_at: T2 }], T2);
    expect((await db.selectFrom("contacts").select("_deleted_at").where("id", "=", 7).executeTakeFirstOrThrow())._deleted_at).not.toBeNull();
    // Lead b is read holding contact 7: the update alone brings the contact back.
    await upsert(db, "leads", [{ ...leadRow("b", "c1", 7), _observed_at: T3 }], T3);
    expect((await db.selectFrom("contacts").select("_deleted_at").where("id", "=", 7).executeTakeFirstOrThrow())._deleted_at).toBeNull();
  });

  it("a deletion never moves a row's observation back: a cascade keeps what a newer read observed", async () => {
    const { db } = warehouse();
    await upsert(db, "leads", [{ ...leadRow("lead-1", "c1", 7), _observed_at: T4 }], T4);
    await markDeletedKeys(db, "leads", { campaign_uid: "c1" }, [{ uid: "lead-1" }], T4, T2);
    const row = await db.selectFrom("leads").select(["_observed_at", "_deleted_at"]).executeTakeFirstOrThrow();
    expect(row).toEqual({ _observed_at: T4, _deleted_at: T4 });
  });
});
