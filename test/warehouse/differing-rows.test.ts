import { sql } from "kysely";
import { beforeEach, describe, expect, it } from "vitest";
import { differingRows } from "../../src/warehouse/differing-rows.ts";
import { SYNCED_TABLES, type RowInput } from "../../src/warehouse/tables.ts";
import { upsert } from "../../src/warehouse/upsert.ts";
import { useBackends, useMigratedWarehouse } from "./backends.ts";
import { campaignDetailRow } from "./rows.ts";

/** differingRows(): what an upsert of the rows would change, row by row and column by column, by the upsert's own rule. */

const backends = useBackends("differing_rows");
const T1 = new Date("2024-03-01T12:00:00Z");
const T2 = new Date("2024-03-01T13:00:00Z");

describe.each(backends)("differingRows on $name", (backend) => {
  const warehouse = useMigratedWarehouse(backend);

  beforeEach(async () => {
    for (const table of SYNCED_TABLES) await sql`DELETE FROM ${sql.table(table)}`.execute(warehouse().db);
  });

  it("keys a click by its three key columns, the instant as canonical text, and compares its id only where a row gives one", async () => {
    const { db } = warehouse();
    const click = (changes: Partial<RowInput<"link_clicks">> = {}): RowInput<"link_clicks"> => ({
      campaign_uid: "c1",
      schedule_id: 7,
      link: "https://example.com/a|b",
      clicked_on: "2024-03-02T10:00:00.123456Z",
      ...changes,
    });
    await upsert(db, "link_clicks", [click({ id: 501 }), click({ link: "https://example.com/other", id: 502 })], T1);

    expect(await differingRows(db, "link_clicks", [click(), click({ id: null }), click({ link: "https://example.com/other", id: 502 })])).toEqual({ compared: 2, differing: [], missing: [] });
    expect(await differingRows(db, "link_clicks", [click({ id: 509, campaign_uid: "c2" })])).toEqual({
      compared: 1,
      differing: [{ key: { schedule_id: "7", link: "https://example.com/a|b", clicked_on: "2024-03-02T10:00:00.123456Z" }, columns: ["campaign_uid", "id"] }],
      missing: [],
    });
    // A microsecond later is another click: not held, so not compared but missing, keyed in the same form.
    expect(await differingRows(db, "link_clicks", [click({ clicked_on: "2024-03-02T10:00:00.123457Z", id: 509 })])).toEqual({
      compared: 0,
      differing: [],
      missing: [{ schedule_id: "7", link: "https://example.com/a|b", clicked_on: "2024-03-02T10:00:00.123457Z" }],
    });
  });

  it("keys an open by its instant, given as text in any offset or as a Date, compares only live rows, and names a row held deleted missing", async () => {
    const { db } = warehouse();
    const open = (openedOn: string | Date, campaignUid = "c1"): RowInput<"email_opens"> => ({ campaign_uid: campaignUid, schedule_id: 9, opened_on: openedOn });
    await upsert(db, "email_opens", [open("2024-03-02T10:00:00.250Z"), open("2024-03-02T11:00:00Z")], T1);

    expect(await differingRows(db, "email_opens", [open("2024-03-02T12:00:00.250+02:00", "c2"), open(new Date("2024-03-02T11:00:00Z"))])).toEqual({
      compared: 2,
      differing: [{ key: { schedule_id: "9", opened_on: "2024-03-02T10:00:00.250000Z" }, columns: ["campaign_uid"] }],
      missing: [],
    });
    await sql`UPDATE email_opens SET _deleted_at = ${T2} WHERE opened_on = '2024-03-02T10:00:00.250Z'`.execute(db);
    expect(await differingRows(db, "email_opens", [open("2024-03-02T12:00:00.250+02:00", "c2")])).toEqual({
      compared: 0,
      differing: [],
      missing: [{ schedule_id: "9", opened_on: "2024-03-02T10:00:00.250000Z" }],
    });
  });

  it("compares jsonb as values and leaves out the key, bookkeeping columns and columns a row leaves out", async () => {
    const { db } = warehouse();
    await upsert(db, "campaigns", [campaignDetailRow("cmp_1")], T1, { source: "campaign_detail" });
    const held = campaignDetailRow("cmp_1");
    const unchanged = {
      ...held,
      // Other key order, other bookkeeping, a field that could not be read: nothing to tell.
      selected_contact_lists: [{ name: "Founders", uid: "list-1" }],
      _observed_at: T2,
      _detail_observed_at: T2,
      _account: "someone-else",
      _extra: { novel: true },
      _field_issues: { status: { reason: "expected string, got number", raw: 3 } },
      status: undefined,
    };
    expect(await differingRows(db, "campaigns", [unchanged])).toEqual({ compared: 1, differing: [], missing: [] });
    const changed = { ...held, status: "paused", skip_days: ["Sunday"], selected_contact_lists: [{ uid: "list-1", name: "Founders", size: 3 }] };
    expect(await differingRows(db, "campaigns", [changed])).toEqual({
      compared: 1,
      differing: [{ key: { uid: "cmp_1" }, columns: ["selected_contact_lists", "skip_days", "status"] }],
      missing: [],
    });
  });

  it("checks a row that is all key for presence only: a sending domain held live, held deleted, or not held", async () => {
    const { db } = warehouse();
    const domain = (domainId: number): RowInput<"campaign_sending_domains"> => ({ campaign_uid: "cmp_1", domain_id: domainId });
    await upsert(db, "campaign_sending_domains", [domain(1), domain(2)], T1);
    await sql`UPDATE campaign_sending_domains SET _deleted_at = ${T2} WHERE domain_id = 2`.execute(db);

    const { compared, differing, missing } = await differingRows(db, "campaign_sending_domains", [domain(1), domain(2), domain(3)]);
    expect({ compared, differing }).toEqual({ compared: 1, differing: [] });
    expect(missing.map((key) => key.domain_id).sort()).toEqual(["2", "3"]);
    expect(missing[0]).toEqual({ campaign_uid: "cmp_1", domain_id: missing[0]?.domain_id });
  });
});
