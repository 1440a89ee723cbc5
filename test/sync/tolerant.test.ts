import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSummaryText } from "../../src/commands/output.ts";
import { runFullSync, type RunSummary } from "../../src/sync/runs.ts";
import { verify } from "../../src/sync/verify.ts";
import type { UpstreamClient } from "../../src/upstream/client.ts";
import type { Lead } from "../../src/upstream/resources.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";
import { openDeviatingFixture, TEST_KEY, type DeviatingFixture } from "../support/sync.ts";

/**
 * Tolerant ingestion against an upstream that deviates from its document: a
 * proxy in front of the emulator rewrites chosen records, one field at a time
 * (issue 10). A deviation in one field never costs the record or anything
 * below it; only a record without a usable key is rejected, and the run says so.
 */

const databaseUrl = useTestDatabase("tolerant");
const UNKNOWN_CLASSIFICATION = "out_of_office";

let fixture: DeviatingFixture;
/** Whether the proxy still strips the keyless lead's uid (the upstream fixes it later). */
let keylessLeadBroken = true;

interface Victims {
  /** A running campaign whose listing item carries a null workspace_id. */
  campaign: string;
  campaignLeads: number;
  /** A lead of that campaign: its first schedule deviates, its other schedules hold replies or clicks. */
  lead: Lead;
  /** A reply of that lead (not on the first schedule) whose classification is a value the spec does not list. */
  replyId: number;
  /** A campaign with a lead that arrives without a uid. */
  otherCampaign: string;
  otherCampaignLeads: number;
  keyless: Lead;
}
let victims: Victims;

async function cleanLeads(client: UpstreamClient, campaignUid: string): Promise<Lead[]> {
  const leads: Lead[] = [];
  for await (const page of client.pages("leads", { campaignUid })) leads.push(...page.records.map((record) => record.value as Lead));
  return leads;
}

async function chooseVictims(client: UpstreamClient): Promise<Victims> {
  const campaigns: { uid: string; status: string }[] = [];
  for await (const page of client.pages("campaigns", {})) campaigns.push(...page.records.map((record) => record.value as { uid: string; status: string }));
  const running = campaigns.filter((campaign) => campaign.status === "running");
  for (const campaign of running) {
    const leads = await cleanLeads(client, campaign.uid);
    const lead = leads.find((candidate) => candidate.schedules.length >= 2 && candidate.schedules.slice(1).some((item) => item.replies.length > 0));
    if (!lead) continue;
    const replyId = (lead.schedules.slice(1).find((item) => item.replies.length > 0)?.replies[0]?.id ?? 0) as number;
    const other = running.find((candidate) => candidate.uid !== campaign.uid);
    if (!other) break;
    const otherLeads = await cleanLeads(client, other.uid);
    const keyless = otherLeads.find((candidate) => candidate.schedules.length > 0);
    if (!keyless) continue;
    return { campaign: campaign.uid, campaignLeads: leads.length, lead, replyId, otherCampaign: other.uid, otherCampaignLeads: otherLeads.length, keyless };
  }
  throw new Error("the seed has no running campaign with a lead whose later schedules hold replies");
}

type Json = Record<string, unknown>;

function deviate(path: string, _query: URLSearchParams, body: unknown): unknown {
  const records = (Array.isArray(body) ? body : ((body as { data?: unknown[] }).data ?? [body])) as Json[];
  for (const record of records) {
    // An upstream that echoes the API key inside its records (an unknown field): the warehouse must not store it.
    record.debug_note = `served for ${TEST_KEY}`;
    if (path === "/api/v1/campaigns/" && record.uid === victims.campaign) record.workspace_id = null;
    if ((path === "/api/v1/leads/" || path === "/api/v1/lead/") && record.uid === victims.lead.uid) {
      const [first, ...rest] = record.schedules as Json[];
      if (first) {
        first.status = 12345;
        first.reply_received = String(first.reply_received);
      }
      for (const item of rest) for (const reply of item.replies as Json[]) if (reply.id === victims.replyId) reply.reply_classification = UNKNOWN_CLASSIFICATION;
    }
    if (path === "/api/v1/replies/" && record.id === victims.replyId) record.reply_classification = UNKNOWN_CLASSIFICATION;
    if (path === "/api/v1/leads/" && keylessLeadBroken && record.uid === victims.keyless.uid) delete record.uid;
  }
  return body;
}

/** What the keyless lead held below it: its contact, schedules, and their replies and clicks. */
const belowKeyless = () => 1 + victims.keyless.schedules.reduce((sum, item) => sum + 1 + item.replies.length + item.link_click_events.length, 0);

let first: RunSummary;

beforeAll(async () => {
  fixture = await openDeviatingFixture(databaseUrl(), "tolerant", deviate);
  victims = await chooseVictims(fixture.client);
  first = await runFullSync(fixture.context({ client: fixture.deviating }));
});
afterAll(async () => {
  await fixture?.close();
});

describe("an upstream that deviates from its document", () => {
  it("keeps a campaign whose listing item has a null where an integer belongs, and walks it in full", async () => {
    const db = fixture.warehouse.db;
    const campaign = await db.selectFrom("campaigns").select(["workspace_id", "_field_issues"]).where("uid", "=", victims.campaign).executeTakeFirstOrThrow();
    expect(campaign.workspace_id).toEqual(expect.any(Number)); // the detail (#2) read it
    expect(campaign._field_issues).toEqual({
      campaigns: { workspace_id: { reason: "expected an integer, got null", raw: null, first_seen_at: expect.any(String) } },
    });
    const leads = await db.selectFrom("leads").select(sql<number>`count(*)::int`.as("n")).where("campaign_uid", "=", victims.campaign).executeTakeFirstOrThrow();
    expect(leads.n).toBe(victims.campaignLeads);
  });

  it("keeps every schedule, click and reply of a lead whose one schedule deviates, and names each field", async () => {
    const db = fixture.warehouse.db;
    const [deviatingSchedule, ...others] = victims.lead.schedules;
    const schedules = await db.selectFrom("schedules").select(["id", "status", "reply_received", "_field_issues"]).where("lead_uid", "=", victims.lead.uid).orderBy("id").execute();
    expect(schedules.map((row) => row.id).sort()).toEqual(victims.lead.schedules.map((item) => item.id).sort());
    const broken = schedules.find((row) => row.id === deviatingSchedule?.id);
    expect(broken).toMatchObject({ status: "12345", reply_received: deviatingSchedule?.reply_received });
    expect(broken?._field_issues).toEqual({
      leads: {
        status: { reason: "a number where a string is documented; read as its decimal text", raw: 12345, first_seen_at: expect.any(String) },
        reply_received: {
          reason: `boolean sent as "${String(deviatingSchedule?.reply_received)}"; read as ${String(deviatingSchedule?.reply_received)}`,
          raw: String(deviatingSchedule?.reply_received),
          first_seen_at: expect.any(String),
        },
      },
    });
    for (const item of others) expect(schedules.find((row) => row.id === item.id)?._field_issues).toBeNull();
    const replyIds = others.flatMap((item) => item.replies.map((reply) => reply.id));
    const clicks = others.flatMap((item) => item.link_click_events.map((click) => click.id));
    expect((await db.selectFrom("replies").select("id").where("id", "in", replyIds).execute()).length).toBe(replyIds.length);
    if (clicks.length > 0) expect((await db.selectFrom("link_clicks").select("id").where("id", "in", clicks).execute()).length).toBe(clicks.length);
  });

  it("stores an enum value the spec does not list as it came, names it per source, and the views still count", async () => {
    const db = fixture.warehouse.db;
    const reply = await db.selectFrom("replies").select(["reply_classification"]).where("id", "=", victims.replyId).executeTakeFirstOrThrow();
    expect(reply.reply_classification).toBe(UNKNOWN_CLASSIFICATION);
    const issues = await db.selectFrom("field_issues").selectAll().where("table_name", "=", "replies").where("record_key", "=", String(victims.replyId)).orderBy("source").execute();
    expect(issues.map((issue) => [issue.source, issue.field, issue.raw_value])).toEqual([
      ["leads", "reply_classification", UNKNOWN_CLASSIFICATION],
      ["replies", "reply_classification", UNKNOWN_CLASSIFICATION],
    ]);
    expect(issues[0]?.reason).toMatch(/^not one of the documented values/);
    expect(issues[0]?.first_seen_at).toBeInstanceOf(Date);
    expect(issues[0]?.last_seen_at).toBeInstanceOf(Date);

    const funnel = await db.selectFrom("campaign_funnel").select(["campaign_uid", "replied", "positive_replies", "neutral_replies", "negative_replies"]).execute();
    expect(funnel.length).toBeGreaterThan(0);
    const victim = funnel.find((row) => row.campaign_uid === victims.campaign);
    expect(victim?.replied).toBeGreaterThan(0);
    expect((await db.selectFrom("engagement_daily").select("day").where("campaign_uid", "=", victims.campaign).execute()).length).toBeGreaterThan(0);
  });

  it("rejects only the lead without a usable key, counts what it held as skipped, and ends the run partial, saying why", async () => {
    expect(first.outcome).toBe("partial");
    expect(first.failures).toEqual([]);
    expect(first.rejected).toBe(1);
    expect(first.skipped).toBe(belowKeyless());
    expect(first.fieldIssues).toMatchObject({
      "campaigns.workspace_id": 1,
      "schedules.status": expect.any(Number),
      "schedules.reply_received": expect.any(Number),
      "replies.reply_classification": expect.any(Number),
    });
    const text = runSummaryText(first);
    expect(text).toMatch(/partial/);
    expect(text).toMatch(/1 record could not be placed .*rejected_records/);
    expect(text).toMatch(new RegExp(`with ${belowKeyless()} records below it`));

    const db = fixture.warehouse.db;
    const rejected = await db.selectFrom("rejected_records").selectAll().execute();
    expect(rejected).toHaveLength(1);
    expect(rejected[0]).toMatchObject({ stream: "leads", campaign_uid: victims.otherCampaign, record_key: null, skipped: belowKeyless(), resolved_at: null });
    expect(rejected[0]?.reason).toBe("uid: missing (a key field, so the record cannot be placed)");
    const { uid: _uid, ...withoutUid } = victims.keyless;
    expect(rejected[0]?.payload).toEqual({ ...withoutUid, debug_note: "served for [REDACTED]" });

    const leads = await db.selectFrom("leads").select(sql<number>`count(*)::int`.as("n")).where("campaign_uid", "=", victims.otherCampaign).executeTakeFirstOrThrow();
    expect(leads.n).toBe(victims.otherCampaignLeads - 1);
  });

  it("rewrites no row when nothing changed, field issues included, and keeps one rejected row", async () => {
    const db = fixture.warehouse.db;
    const issuesBefore = await db.selectFrom("field_issues").select(["table_name", "record_key", "source", "field", "first_seen_at"]).orderBy("table_name").orderBy("record_key").orderBy("field").orderBy("source").execute();
    const startedAt = new Date();
    const second = await runFullSync(fixture.context({ client: fixture.deviating }));
    expect(second.outcome).toBe("partial");
    for (const table of ["workspaces", "domains", "contact_lists", "campaigns", "campaign_sending_domains", "email_sequences", "leads", "contacts", "schedules", "replies", "link_clicks", "email_opens"]) {
      const touched = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where _synced_at >= ${startedAt} or _deleted_at is not null`.execute(db);
      expect({ table, touched: touched.rows[0]?.n }).toEqual({ table, touched: 0 });
    }
    const issuesAfter = await db.selectFrom("field_issues").select(["table_name", "record_key", "source", "field", "first_seen_at"]).orderBy("table_name").orderBy("record_key").orderBy("field").orderBy("source").execute();
    expect(issuesAfter).toEqual(issuesBefore);
    expect(await db.selectFrom("rejected_records").select(["times_seen", "resolved_at"]).execute()).toEqual([{ times_seen: 2, resolved_at: null }]);
  });

  it("lands the lead once the upstream sends its key again, and resolves its rejected row", async () => {
    keylessLeadBroken = false;
    const third = await runFullSync(fixture.context({ client: fixture.deviating }));
    expect(third.outcome).toBe("succeeded");
    const db = fixture.warehouse.db;
    expect(await db.selectFrom("leads").select("uid").where("uid", "=", victims.keyless.uid).executeTakeFirst()).toBeDefined();
    const [row] = await db.selectFrom("rejected_records").select(["resolved_at"]).execute();
    expect(row?.resolved_at).toBeInstanceOf(Date);
  });

  it("leaves no trace of the API key anywhere in the warehouse, though the upstream echoed it in every record", async () => {
    const campaign = await fixture.warehouse.db.selectFrom("campaigns").select("_extra").where("uid", "=", victims.campaign).executeTakeFirstOrThrow();
    expect(campaign._extra).toMatchObject({ debug_note: "served for [REDACTED]" });
    const tables = await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = 'tolerant'`.execute(fixture.warehouse.db);
    expect(tables.rows.length).toBeGreaterThan(10);
    for (const { name } of tables.rows) {
      const hits = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(name)} t where t::text like ${`%${TEST_KEY}%`}`.execute(fixture.warehouse.db);
      expect({ name, hits: hits.rows[0]?.n }).toEqual({ name, hits: 0 });
    }
  });
});

describe("a campaign whose listing sends its all-digit uid as a JSON number", () => {
  const NUMERIC = "12345";
  const scripted = useScriptedCampaigns(useTestDatabase("tolerant_numeric"), NUMERIC);

  it("is placed under the uid's decimal text, named on its row, and its leads are synced", async () => {
    const h = await scripted({ status: "running", leads: 3 });
    const item = { uid: Number(NUMERIC), name: "Numeric", workspace_id: 1, created_on: "2026-05-01T09:00:00.000Z", status: "running" };
    h.upstream.hook = ({ path }) => (path === "/api/v1/campaigns/" ? { status: 200, body: { data: [item], total: 1 } } : undefined);

    const summary = await runFullSync(h.context());

    expect(summary.outcome).toBe("succeeded");
    expect(summary.fieldIssues).toMatchObject({ "campaigns.uid": 1 });
    const campaign = await h.warehouse.db.selectFrom("campaigns").select(["uid", "_field_issues"]).executeTakeFirstOrThrow();
    expect(campaign).toEqual({
      uid: NUMERIC,
      _field_issues: { campaigns: { uid: { reason: "a number where a string is documented; read as its decimal text", raw: 12345, first_seen_at: expect.any(String) } } },
    });
    const leads = await h.warehouse.db.selectFrom("leads").select(sql<number>`count(*)::int`.as("n")).where("campaign_uid", "=", NUMERIC).executeTakeFirstOrThrow();
    expect(leads.n).toBe(3);
    expect(await h.warehouse.db.selectFrom("rejected_records").select("reason").execute()).toEqual([]);
  });
});

describe("a scripted campaign whose leads and events deviate", () => {
  const CAMPAIGN = "cmp_deviating";
  const scripted = useScriptedCampaigns(useTestDatabase("tolerant_scripted"), CAMPAIGN);

  it("reads a date-time with a lower-case `t` separator (`2026-05-01t10:00:00z`) as the instant it names, as a lower-case `z`, so an open event keyed by it is placed", async () => {
    const h = await scripted({ status: "running", leads: 1, sentOn: "2026-05-01T09:00:00.000Z" });
    h.upstream.state.opens.set(CAMPAIGN, [
      { schedule_id: 1001, opened_on: "2026-05-01t10:00:00z" },
      { schedule_id: 1001, opened_on: "2026-05-01T11:00:00z" },
    ]);

    const summary = await runFullSync(h.context());

    const opens = await h.warehouse.db.selectFrom("email_opens").select(["opened_on", "_field_issues"]).orderBy("opened_on").execute();
    const rejected = await h.warehouse.db.selectFrom("rejected_records").select("reason").execute();
    expect({ outcome: summary.outcome, opens: opens.map((row) => row.opened_on.toISOString()), rejected: rejected.map((row) => row.reason) }).toEqual({
      outcome: "succeeded",
      opens: ["2026-05-01T10:00:00.000Z", "2026-05-01T11:00:00.000Z"],
      rejected: [],
    });
    // Not the documented form: still named on the row.
    expect(JSON.stringify(opens[0]?._field_issues)).toContain("date-time not in the documented UTC form; read as 2026-05-01T10:00:00.000000Z");
  });

  it("places a schedule whose id arrives as \"1001.0\" under 1001, not in rejected_records, and names it", async () => {
    const h = await scripted({ status: "running", leads: 1, sentOn: "2026-05-01T10:00:00.000Z" });
    const [first] = h.upstream.state.leads.get(CAMPAIGN) ?? [];
    ((first as unknown as { schedules: Json[] }).schedules[0] as Json).id = "1001.0";

    const summary = await runFullSync(h.context());

    const schedule = await h.warehouse.db.selectFrom("schedules").select(["id", "_field_issues"]).where("id", "=", 1001).executeTakeFirst();
    expect({ outcome: summary.outcome, placed: schedule !== undefined }).toEqual({ outcome: "succeeded", placed: true });
    expect(schedule?._field_issues).toMatchObject({ leads: { id: { reason: "integer sent as a string; read as 1001", raw: "1001.0" } } });
  });

  it("places a lead's schedule sent as one object instead of a one-item list, and verify --deep finds it held", async () => {
    const h = await scripted({ status: "running", leads: 2, sentOn: "2026-05-01T10:00:00.000Z" });
    const [first] = h.upstream.state.leads.get(CAMPAIGN) ?? [];
    (first as unknown as Json).schedules = ((first as unknown as Json).schedules as Json[])[0]; // the single schedule, not wrapped in an array

    const summary = await runFullSync(h.context());

    const db = h.warehouse.db;
    const schedules = await db.selectFrom("schedules").select(["id", "lead_uid"]).orderBy("id").execute();
    expect({ outcome: summary.outcome, schedules }).toEqual({ outcome: "succeeded", schedules: [{ id: 1001, lead_uid: "L1" }, { id: 1002, lead_uid: "L2" }] });
    expect(summary.fieldIssues).toMatchObject({ "leads.schedules": 1 });
    const lead = await db.selectFrom("leads").select("_field_issues").where("uid", "=", "L1").executeTakeFirstOrThrow();
    expect(lead._field_issues).toMatchObject({ leads: { schedules: { reason: "a single item where a list is documented; read as a one-item list" } } });

    const result = await verify(h.context(), { deep: "all" });
    expect(result.lines.find((line) => line.campaignUid === CAMPAIGN && line.stream === "schedules")?.status).toBe("ok");
    // A walk that reads the list as a one-item list vouches for it: nothing is soft-deleted.
    await runFullSync(h.context());
    expect(await db.selectFrom("schedules").select("id").where("_deleted_at", "is not", null).execute()).toEqual([]);
  });

  it("places a schedule's click sent as one object instead of a one-item list", async () => {
    const h = await scripted({ status: "running", leads: 1, sentOn: "2026-05-01T10:00:00.000Z" });
    const [first] = h.upstream.state.leads.get(CAMPAIGN) ?? [];
    ((first as unknown as { schedules: Json[] }).schedules[0] as Json).link_click_events = { id: 88, link: "https://example.test/lone", clicked_on: "2026-05-01T10:05:00Z" };

    const summary = await runFullSync(h.context());

    const clicks = await h.warehouse.db.selectFrom("link_clicks").select(["id", "schedule_id", "link"]).execute();
    expect({ outcome: summary.outcome, clicks }).toEqual({ outcome: "succeeded", clicks: [{ id: 88, schedule_id: 1001, link: "https://example.test/lone" }] });
    expect(summary.fieldIssues).toMatchObject({ "schedules.link_click_events": expect.any(Number) });
  });

  it("does not fail the leads page when a nested click's clicked_on arrives in another precision under the same click id", async () => {
    const h = await scripted({ status: "running", leads: 2, sentOn: "2026-05-01T10:00:00.000Z" });
    const [first] = h.upstream.state.leads.get(CAMPAIGN) ?? [];
    const schedule = (first as unknown as { schedules: Json[] }).schedules[0] as Json;
    schedule.link_click_events = [{ id: 77, link: "https://example.test/a", clicked_on: "2026-05-01T10:00:00.123456Z" }];
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");

    // The upstream now sends its date-times to the millisecond: the same click (id 77), another instant by 456 µs.
    schedule.link_click_events = [{ id: 77, link: "https://example.test/a", clicked_on: "2026-05-01T10:00:00.123Z" }];
    (first as unknown as Json).sender_name = "Renamed sender";
    const run = await runFullSync(h.context());

    const db = h.warehouse.db;
    const lead = await db.selectFrom("leads").select("sender_name").where("uid", "=", "L1").executeTakeFirstOrThrow();
    expect({ failures: run.failures.map((failure) => `${failure.stream}: ${failure.error.message}`), sender: lead.sender_name }).toEqual({ failures: [], sender: "Renamed sender" });
    const clicks = await db.selectFrom("link_clicks").select(["id", "clicked_on"]).where("clicked_on", "=", new Date("2026-05-01T10:00:00.123Z")).execute();
    expect(clicks.map((row) => row.id)).toEqual([77]);
  });

  for (const [label, emailData] of [
    ["its id null", { id: null, subject: "Step 1", body: "<p>Hello</p>", email_content_type: "text/html" }],
    ["sent as JSON text", JSON.stringify({ id: 1, subject: "Step 1", body: "<p>Hello</p>", email_content_type: "text/html" })],
  ] as const) {
    it(`sets aside a schedule's email_data with ${label}, with its payload and the lead's key, as a contact without a readable id, and lands the schedule`, async () => {
      const h = await scripted({ status: "running", leads: 1, sentOn: "2026-05-01T10:00:00.000Z" });
      const [first] = h.upstream.state.leads.get(CAMPAIGN) ?? [];
      ((first as unknown as { schedules: Json[] }).schedules[0] as Json).email_data = emailData;

      const summary = await runFullSync(h.context());

      const db = h.warehouse.db;
      const rejected = await db.selectFrom("rejected_records").select(["stream", "reason", "payload", "parent_key", "record_key"]).execute();
      expect({ outcome: summary.outcome, rejected }).toEqual({
        outcome: "partial",
        rejected: [{ stream: "leads", reason: expect.stringMatching(/^schedules\.0\.email_data(\.id)?: /), payload: emailData, parent_key: "L1", record_key: null }],
      });
      const schedule = await db.selectFrom("schedules").select(["id", "email_sequence_id"]).executeTakeFirstOrThrow();
      expect(schedule).toEqual({ id: 1001, email_sequence_id: null });

      // The upstream sends the object again: the sequence lands, and nothing is set aside any more.
      ((first as unknown as { schedules: Json[] }).schedules[0] as Json).email_data = { id: 1, subject: "Step 1", body: "<p>Hello</p>", email_content_type: "text/html" };
      expect((await runFullSync(h.context())).outcome).toBe("succeeded");
      expect(await db.selectFrom("schedules").select(["id", "email_sequence_id"]).execute()).toEqual([{ id: 1001, email_sequence_id: 1 }]);
      expect(await db.selectFrom("rejected_records").select("id").where("resolved_at", "is", null).execute()).toEqual([]);
    });
  }
});
