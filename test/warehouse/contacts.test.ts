import { sql } from "kysely";
import { beforeEach, describe, expect, it } from "vitest";
import { markDeleted, upsert } from "../../src/warehouse/upsert.ts";
import { useBackends, useMigratedWarehouse } from "./backends.ts";
import { contactRow, leadRow } from "./rows.ts";

/**
 * A contact exists upstream while a lead holds it (migrations 0008 and 0016):
 * the warehouse soft-deletes one that no live lead holds any more, whether its
 * last lead was deleted or let go of it for another contact.
 */

const backends = useBackends("contacts");

const T1 = new Date("2024-03-01T12:00:00Z");
const T2 = new Date("2024-03-01T13:00:00Z");

describe.each(backends)("contacts follow their leads on $name", (backend) => {
  const warehouse = useMigratedWarehouse(backend);
  const db = () => warehouse().db;

  beforeEach(async () => {
    for (const table of ["leads", "contacts"]) await sql`DELETE FROM ${sql.table(table)}`.execute(db());
    await upsert(db(), "contacts", [contactRow(1), contactRow(2), contactRow(3)], T1);
    await upsert(db(), "leads", [leadRow("L1", "c1", 1), leadRow("L2", "c1", 2), leadRow("L3", "c1", 2)], T1);
  });

  const deletedAt = async () =>
    Object.fromEntries((await db().selectFrom("contacts").select(["id", "_deleted_at"]).orderBy("id").execute()).map((row) => [Number(row.id), row._deleted_at]));

  it("retires the contact a live lead let go of for another, when no other live lead holds it", async () => {
    await upsert(db(), "leads", [leadRow("L1", "c1", 3)], T2);
    expect(await deletedAt()).toEqual({ 1: T2, 2: null, 3: null });
  });

  it("keeps a contact another live lead still holds", async () => {
    await upsert(db(), "leads", [leadRow("L2", "c1", 3)], T2);
    expect(await deletedAt()).toEqual({ 1: null, 2: null, 3: null });
  });

  it("retires a contact with its last live lead deleted, and brings it back with a lead that holds it again", async () => {
    await markDeleted(db(), "leads", { campaign_uid: "c1" }, [{ uid: "L2" }, { uid: "L3" }], T2);
    expect(await deletedAt()).toEqual({ 1: T2, 2: null, 3: null });
    await upsert(db(), "contacts", [contactRow(1)], T2);
    await upsert(db(), "leads", [leadRow("L1", "c1", 1)], T2);
    expect((await deletedAt())[1]).toBeNull();
  });
});
