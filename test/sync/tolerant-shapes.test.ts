import { describe, expect, it } from "vitest";
import { runFullSync } from "../../src/sync/runs.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";

type Json = Record<string, unknown>;
const CAMPAIGN = "cmp_shapes";
const scripted = useScriptedCampaigns(useTestDatabase("tolerant_shapes"), CAMPAIGN);

function reply(id: number) {
  return { id, body_plain_text: "hi", body_html: "<p>hi</p>", received_on: "2026-05-01T11:00:00Z", reply_classification: "positive" };
}

describe("lists and objects in other shapes", () => {
  it("a lead's schedules sent as an object keyed by index ({\"0\": s1, \"1\": s2}) are that list", async () => {
    const h = await scripted({ status: "running", leads: 1, sentOn: "2026-05-01T10:00:00.000Z" });
    const [first] = h.upstream.state.leads.get(CAMPAIGN) ?? [];
    const lead = first as unknown as Json;
    const [s1] = lead.schedules as Json[];
    const s2 = { ...(s1 as Json), id: 2001, replies: [reply(9001)] };
    lead.schedules = { "0": s1, "1": s2 };

    const summary = await runFullSync(h.context());

    const db = h.warehouse.db;
    const schedules = await db.selectFrom("schedules").select("id").orderBy("id").execute();
    const rejected = await db.selectFrom("rejected_records").select(["reason", "skipped"]).execute();
    expect({ outcome: summary.outcome, schedules: schedules.map((row) => row.id), rejected }).toEqual({ outcome: "succeeded", schedules: [1001, 2001], rejected: [] });
  });

  it("a lead's schedules sent as JSON text are the list it holds", async () => {
    const h = await scripted({ status: "running", leads: 1, sentOn: "2026-05-01T10:00:00.000Z" });
    const [first] = h.upstream.state.leads.get(CAMPAIGN) ?? [];
    const lead = first as unknown as Json;
    lead.schedules = JSON.stringify(lead.schedules);

    const summary = await runFullSync(h.context());

    const db = h.warehouse.db;
    const schedules = await db.selectFrom("schedules").select("id").execute();
    const rejected = await db.selectFrom("rejected_records").select(["reason", "skipped"]).execute();
    const issues = await db.selectFrom("leads").select("_field_issues").executeTakeFirstOrThrow();
    expect({ outcome: summary.outcome, schedules: schedules.length, rejected }).toEqual({ outcome: "succeeded", schedules: 1, rejected: [] });
    expect(issues._field_issues).toMatchObject({ leads: { schedules: { reason: "a list sent as JSON text; read as the list it holds" } } });
  });

  it("a lead's schedules sent as JSON text whose escapes make a NUL land, the NUL replaced as any answer's is", async () => {
    const h = await scripted({ status: "running", leads: 1, sentOn: "2026-05-01T10:00:00.000Z" });
    const [first] = h.upstream.state.leads.get(CAMPAIGN) ?? [];
    const lead = first as unknown as Json;
    const [schedule] = lead.schedules as Json[];
    const emailData = (schedule as Json).email_data as Json;
    lead.schedules = JSON.stringify([{ ...schedule, email_data: { ...emailData, subject: "Step\u00001" } }]);

    const summary = await runFullSync(h.context());

    const db = h.warehouse.db;
    expect(summary.outcome).toBe("succeeded");
    expect(await db.selectFrom("schedules").select("id").execute()).toHaveLength(1);
    const [row] = await db.selectFrom("schedules").select("_field_issues").execute();
    expect(JSON.stringify(row?._field_issues)).toContain("email_data.subject");
  });

  it("sets aside, storable, an email_data that cannot be placed inside schedules sent as JSON text with a NUL", async () => {
    const h = await scripted({ status: "running", leads: 1, sentOn: "2026-05-01T10:00:00.000Z" });
    const [first] = h.upstream.state.leads.get(CAMPAIGN) ?? [];
    const lead = first as unknown as Json;
    const [schedule] = lead.schedules as Json[];
    lead.schedules = JSON.stringify([{ ...schedule, email_data: { id: "none", subject: "Step\u00001" } }]);

    const summary = await runFullSync(h.context());

    const db = h.warehouse.db;
    expect(summary.outcome).toBe("partial");
    expect(await db.selectFrom("schedules").select("email_sequence_id").execute()).toEqual([{ email_sequence_id: null }]);
    const rejected = await db.selectFrom("rejected_records").select("payload").execute();
    expect(rejected).toEqual([{ payload: { id: "none", subject: "Step\uFFFD1" } }]);
  });

  it("a lead's contact sent as a one-item list is placed (as a single object sent for a list is)", async () => {
    const h = await scripted({ status: "running", leads: 1, sentOn: "2026-05-01T10:00:00.000Z" });
    const [first] = h.upstream.state.leads.get(CAMPAIGN) ?? [];
    const lead = first as unknown as Json;
    lead.contact = [lead.contact];

    const summary = await runFullSync(h.context());

    const db = h.warehouse.db;
    const contacts = await db.selectFrom("contacts").select("id").execute();
    const leadRow = await db.selectFrom("leads").select(["contact_id"]).executeTakeFirst();
    const rejected = await db.selectFrom("rejected_records").select(["reason"]).execute();
    expect({ outcome: summary.outcome, contacts: contacts.map((row) => row.id), contactId: leadRow?.contact_id, rejected }).toEqual({
      outcome: "succeeded",
      contacts: [1_001_001],
      contactId: 1_001_001,
      rejected: [],
    });
  });
});

describe("a part that cannot be placed, inside an object sent as a one-item list", () => {
  // What cannot be placed is set aside with the value it arrived as; reading that value must unwrap each level as
  // the tolerant reader did, or the part is dropped without a word and the run says succeeded.
  async function syncedWith(shape: (lead: Json) => void) {
    const h = await scripted({ status: "running", leads: 1, sentOn: "2026-05-01T10:00:00.000Z" });
    const [first] = h.upstream.state.leads.get(CAMPAIGN) ?? [];
    shape(first as unknown as Json);
    const summary = await runFullSync(h.context());
    const db = h.warehouse.db;
    const schedules = await db.selectFrom("schedules").select(["id", "email_sequence_id"]).execute();
    const rejected = await db.selectFrom("rejected_records").select(["parent_key", "payload"]).execute();
    return { outcome: summary.outcome, schedules, rejected };
  }

  it("sets aside a contact whose id cannot be read, in a lead sent as a one-item list", async () => {
    const h = await scripted({ status: "running", leads: 2, sentOn: "2026-05-01T10:00:00.000Z" });
    const [first, second] = (h.upstream.state.leads.get(CAMPAIGN) ?? []) as unknown as Json[];
    (first?.contact as Json).id = "n/a";
    h.upstream.state.leads.set(CAMPAIGN, [[first], second] as never);

    const summary = await runFullSync(h.context());

    const db = h.warehouse.db;
    const leads = await db.selectFrom("leads").select("uid").orderBy("uid").execute();
    const rejected = await db.selectFrom("rejected_records").select(["parent_key", "payload"]).execute();
    expect({ outcome: summary.outcome, leads: leads.length, rejected }).toEqual({
      outcome: "partial",
      leads: 2,
      rejected: [{ parent_key: String(first?.uid), payload: expect.objectContaining({ id: "n/a" }) }],
    });
  });

  it("sets aside an email_data whose id cannot be read, in a schedule sent as a one-item list", async () => {
    let uid = "";
    const synced = await syncedWith((lead) => {
      uid = String(lead.uid);
      const [schedule] = lead.schedules as Json[];
      (schedule?.email_data as Json).id = "n/a";
      lead.schedules = [[schedule]];
    });
    expect(synced).toEqual({
      outcome: "partial",
      schedules: [{ id: expect.any(Number), email_sequence_id: null }],
      rejected: [{ parent_key: uid, payload: expect.objectContaining({ id: "n/a" }) }],
    });
  });

  it("sets aside an email_data whose id cannot be read, in an email_data sent as a one-item list", async () => {
    let uid = "";
    const synced = await syncedWith((lead) => {
      uid = String(lead.uid);
      const [schedule] = lead.schedules as Json[];
      (schedule as Json).email_data = [{ ...((schedule as Json).email_data as Json), id: "n/a" }];
    });
    // Set aside as it arrived: the list.
    expect(synced).toEqual({
      outcome: "partial",
      schedules: [{ id: expect.any(Number), email_sequence_id: null }],
      rejected: [{ parent_key: uid, payload: [expect.objectContaining({ id: "n/a" })] }],
    });
  });
});

describe("a lookup answered with another key", () => {
  it("sets a detail answered under another spelling of the asked uid aside, instead of writing a row no listing names", async () => {
    const h = await scripted({ status: "running", leads: 2, sentOn: "2026-05-01T10:00:00.000Z" });
    const [campaign] = h.upstream.state.campaigns;
    h.upstream.hook = ({ path }) => (path === "/api/v1/campaign/" ? { status: 200, body: { ...campaign, uid: ` ${CAMPAIGN.toUpperCase()} ` } } : undefined);

    const summary = await runFullSync(h.context());

    const db = h.warehouse.db;
    const campaigns = await db.selectFrom("campaigns").select(["uid", "daily_email_limit"]).orderBy("uid").execute();
    const leads = await db.selectFrom("leads").select(["uid", "campaign_uid"]).orderBy("uid").execute();
    const rejected = await db.selectFrom("rejected_records").select(["stream", "record_key", "reason"]).execute();
    expect(summary.outcome).toBe("partial");
    expect(campaigns).toEqual([{ uid: CAMPAIGN, daily_email_limit: null }]);
    expect(leads).toEqual([{ uid: "L1", campaign_uid: CAMPAIGN }, { uid: "L2", campaign_uid: CAMPAIGN }]);
    expect(rejected).toEqual([expect.objectContaining({ record_key: `requested=${CAMPAIGN}`, reason: `answered with the key " CMP_SHAPES " for a lookup of "${CAMPAIGN}"; not placed` })]);
  });
});

describe("a lookup answered with another key, confirming a deletion", () => {
  it("keeps the lead the listing left out live, and sets the answer aside", async () => {
    const h = await scripted({ status: "running", leads: 2, sentOn: "2026-05-01T10:00:00.000Z" });
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    const leads = h.upstream.state.leads.get(CAMPAIGN) ?? [];
    const [first] = leads.splice(1, 1).length === 1 ? leads : [];
    // The listing no longer holds L2; its lookup answers with L1.
    h.upstream.hook = ({ path }) => (path === "/api/v1/lead/" ? { status: 200, body: first } : undefined);

    const summary = await runFullSync(h.context());

    const db = h.warehouse.db;
    const live = await db.selectFrom("leads").select("uid").where("_deleted_at", "is", null).orderBy("uid").execute();
    const rejected = await db.selectFrom("rejected_records").select(["record_key", "reason"]).execute();
    expect(summary.outcome).toBe("partial");
    expect(live.map((row) => row.uid)).toEqual(["L1", "L2"]);
    expect(rejected).toEqual([{ record_key: "requested=L2", reason: 'answered with the key "L1" for a lookup of "L2"; not placed' }]);
  });
});

describe("empty lists sent as null (as Go encodes an empty slice)", () => {
  it("a leads page {data: null, total: 0} is an empty listing, not a failed stream", async () => {
    const h = await scripted({ status: "running", leads: 0 });
    h.upstream.hook = ({ path }) => (path === "/api/v1/leads/" ? { status: 200, body: { data: null, total: 0 } } : undefined);

    const summary = await runFullSync(h.context());

    expect({ outcome: summary.outcome, failures: summary.failures.map((failure) => `${failure.stream}: ${failure.error.message}`) }).toEqual({ outcome: "succeeded", failures: [] });
  });

  it("a replies answer of null (no replies) is an empty listing, not a failed stream", async () => {
    const h = await scripted({ status: "running", leads: 1, sentOn: "2026-05-01T10:00:00.000Z" });
    h.upstream.hook = ({ path }) => (path === "/api/v1/replies/" ? { status: 200, body: null } : undefined);

    const summary = await runFullSync(h.context());

    expect({ outcome: summary.outcome, failures: summary.failures.map((failure) => `${failure.stream}: ${failure.error.message}`) }).toEqual({ outcome: "succeeded", failures: [] });
  });
});
