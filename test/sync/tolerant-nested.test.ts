import { describe, expect, it } from "vitest";
import { runFullSync } from "../../src/sync/runs.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";

/** Shapes of nested lists and opaque items that drift from the spec, read where they are nested. */

type Json = Record<string, unknown>;
const CAMPAIGN = "cmp_fields";
const scripted = useScriptedCampaigns(useTestDatabase("tolerant_nested"), CAMPAIGN);

describe("any-JSON items of selected_contact_lists", () => {
  it("keeps selected_contact_lists sent as a list of uids (items whose structure the spec does not show) as it came, not as nulls", async () => {
    const h = await scripted({ status: "running", leads: 1 });
    const [campaign] = h.upstream.state.campaigns;
    (campaign as unknown as Json).selected_contact_lists = [{ uid: "lst_a" }, { uid: "lst_b" }];
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    const before = await h.warehouse.db.selectFrom("campaigns").select("selected_contact_lists").executeTakeFirstOrThrow();
    expect(before.selected_contact_lists).toEqual([{ uid: "lst_a" }, { uid: "lst_b" }]);

    // The upstream now sends the lists' uids instead of objects: still the same two lists.
    (campaign as unknown as Json).selected_contact_lists = ["lst_a", "lst_b"];
    await runFullSync(h.context());

    const after = await h.warehouse.db.selectFrom("campaigns").select(["selected_contact_lists", "_field_issues"]).executeTakeFirstOrThrow();
    // Kept as it came (jsonb, items whose structure the spec does not show), and named.
    expect(after.selected_contact_lists).toEqual(["lst_a", "lst_b"]);
    expect(after._field_issues).toMatchObject({
      campaign_detail: { "selected_contact_lists.0": { reason: "expected an object, got a string; kept as it came", raw: "lst_a" } },
    });
  });
});

describe("a lead that cannot be placed, sent as a one-item list", () => {
  it("counts what it held below it as skipped, as it does for the same lead sent as an object", async () => {
    const asObject = await scripted({ status: "running", leads: 2, sentOn: "2026-05-01T10:00:00.000Z" });
    const [first] = (asObject.upstream.state.leads.get(CAMPAIGN) ?? []) as unknown as Json[];
    if (first) first.uid = null;
    const plain = await runFullSync(asObject.context());
    const plainRejected = await asObject.warehouse.db.selectFrom("rejected_records").select(["stream", "skipped"]).execute();

    const asList = await scripted({ status: "running", leads: 2, sentOn: "2026-05-01T10:00:00.000Z" });
    const [firstOfList, second] = (asList.upstream.state.leads.get(CAMPAIGN) ?? []) as unknown as Json[];
    if (firstOfList) firstOfList.uid = null;
    asList.upstream.state.leads.set(CAMPAIGN, [[firstOfList], second] as never);
    const wrapped = await runFullSync(asList.context());
    const wrappedRejected = await asList.warehouse.db.selectFrom("rejected_records").select(["stream", "skipped"]).execute();

    // The lead holds a contact and one schedule: two records below it that could not be placed.
    expect(plainRejected).toEqual([{ stream: "leads", skipped: 2 }]);
    expect({ rejected: wrappedRejected, skipped: wrapped.skipped }).toEqual({ rejected: plainRejected, skipped: plain.skipped });
  });
});

describe("a list of records sent as an object keyed by each record's id", () => {
  it("places a lead's schedules sent as {\"1001\": s1, \"2001\": s2}, as it places them keyed by index", async () => {
    const h = await scripted({ status: "running", leads: 1, sentOn: "2026-05-01T10:00:00.000Z" });
    const [first] = h.upstream.state.leads.get(CAMPAIGN) ?? [];
    const lead = first as unknown as Json;
    const [s1] = lead.schedules as Json[];
    const s2 = { ...(s1 as Json), id: 2001 };
    // Keyed by id, as serializers of a map from id to record write it (the same shape "data as an object keyed by id").
    lead.schedules = { "1001": s1, "2001": s2 };

    const summary = await runFullSync(h.context());

    const db = h.warehouse.db;
    const schedules = await db.selectFrom("schedules").select("id").orderBy("id").execute();
    const rejected = await db.selectFrom("rejected_records").select(["reason", "skipped"]).execute();
    expect({ schedules: schedules.map((row) => row.id), rejected, outcome: summary.outcome }).toEqual({ schedules: [1001, 2001], rejected: [], outcome: "succeeded" });
    const row = await db.selectFrom("leads").select("_field_issues").executeTakeFirstOrThrow();
    expect(row._field_issues).toMatchObject({ leads: { schedules: { reason: "a list sent as an object keyed by each record's id; read as that list" } } });
  });
});
