import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runFullSync, type RunSummary } from "../../src/sync/runs.ts";
import type { UpstreamClient } from "../../src/upstream/client.ts";
import { PATHS } from "../../src/upstream/endpoints.ts";
import { INSTANT_SQL_FORMAT } from "../../src/upstream/instant.ts";
import type { Lead } from "../../src/upstream/resources.ts";
import { useTestDatabase } from "../support/database.ts";
import { openDeviatingFixture, type DeviatingFixture } from "../support/sync.ts";

/**
 * Values that are valid JSON but that PostgreSQL cannot store as they came:
 * the NUL character (refused by text and jsonb alike), lone UTF-16 surrogates
 * (refused by jsonb), an integer beyond a 4-byte column, a date-time whose
 * instant lies outside years 1 to 9999 (past 9999, or in year 0000, which the
 * date-time format alone lets pass), and key text too long for a btree index. One
 * such value fails the statement that writes its whole page, so each must be
 * made storable (and named) or, in a key field, set aside with its record:
 * never cost the page, the stream or the records below it.
 */

const databaseUrl = useTestDatabase("unstorable");

type Json = Record<string, unknown>;

let fixture: DeviatingFixture;
let run: RunSummary;

interface Victims {
  /** A campaign with at least two leads and an open event. */
  campaign: string;
  leads: number;
  /**
   * Its lead whose first schedule holds a reply: text with NUL and lone surrogates, an extra field with NUL in its name, a huge count,
   * a sent_on at Go's zero time (year 1, which is storable) and an email_opened_on that rounds past 9999-12-31.
   */
  lead: Lead;
  replyId: number;
  /** Another of its leads: its uid gains a NUL, so it cannot be placed. */
  keyless: Lead;
  /** One of its open events: its opened_on names an instant after year 9999. */
  open: { schedule_id: number; opened_on: string };
  /** Another: its opened_on is in year 0000, in the plain UTC form. */
  yearZeroOpen: { schedule_id: number; opened_on: string };
  opens: number;
  /** One of its link clicks (from the listing): its link grows past what an index can hold. */
  click: { schedule_id: number; link: string; clicked_on: string };
  /** Another campaign: its detail's custom_unsub_text ends in a lone surrogate. */
  other: string;
  /** A domain whose warmup_days_remaining is beyond a 4-byte integer. */
  domain: number;
}
let victims: Victims;
const LONG_LINK = `https://example.com/track?token=${randomBytes(3000).toString("base64url")}`;

async function all<T>(pages: AsyncIterable<{ records: { value: unknown }[] }>): Promise<T[]> {
  const records: T[] = [];
  for await (const page of pages) records.push(...page.records.map((record) => record.value as T));
  return records;
}

async function chooseVictims(client: UpstreamClient): Promise<Victims> {
  const campaigns = await all<{ uid: string }>(client.pages("campaigns", {}));
  const domains = await all<{ id: number }>(client.pages("domains", {}));
  for (const campaign of campaigns) {
    const leads = await all<Lead>(client.pages("leads", { campaignUid: campaign.uid }));
    const lead = leads.find((candidate) => (candidate.schedules[0]?.replies.length ?? 0) > 0);
    const keyless = leads.find((candidate) => candidate !== lead);
    const opens = await all<{ schedule_id: number; opened_on: string }>(client.pages("email_opens", { campaignUid: campaign.uid }));
    const clicks = await all<{ schedule_id: number; link: string; clicked_on: string }>(client.pages("link_clicks", { campaignUid: campaign.uid }));
    const other = campaigns.find((candidate) => candidate.uid !== campaign.uid);
    if (!lead || !keyless || !opens[0] || !opens[1] || !clicks[0] || !other || !domains[0]) continue;
    return {
      campaign: campaign.uid,
      leads: leads.length,
      lead,
      replyId: lead.schedules[0]?.replies[0]?.id as number,
      keyless,
      open: opens[0],
      yearZeroOpen: opens[1],
      opens: opens.length,
      click: clicks[0],
      other: other.uid,
      domain: domains[0].id,
    };
  }
  throw new Error("the seed has no campaign with two leads, a reply on a first schedule, two open events and a click");
}

const recordsOf = (body: unknown): Json[] => (Array.isArray(body) ? body : Array.isArray((body as Json).data) ? (body as { data: Json[] }).data : [body]) as Json[];

function deviate(path: string, query: URLSearchParams, body: unknown): unknown {
  for (const record of recordsOf(body)) {
    if ((path === PATHS.leads || path === PATHS.lead) && record.uid === victims.lead.uid) {
      record.sender_name = "Ann\u0000Lee";
      record["x\u0000note"] = { text: "v\u0000", broken: "\udc00" };
      const first = (record.schedules as Json[])[0] as Json;
      first.email_open_count = 3_000_000_000;
      first.sent_on = "0001-01-01T00:00:00Z";
      first.email_opened_on = "9999-12-31T23:59:59.9999999Z";
      const reply = (first.replies as Json[])[0] as Json;
      reply.body_plain_text = "hi\u0000there\ud800";
    }
    if (path === PATHS.leads && record.uid === victims.keyless.uid) record.uid = `${victims.keyless.uid}\u0000`;
    if (path === PATHS.replies && record.id === victims.replyId) record.body_plain_text = "hi\u0000there\ud800";
    if (path === PATHS.emailOpenEvents && record.schedule_id === victims.open.schedule_id && record.opened_on === victims.open.opened_on) {
      record.opened_on = "9999-12-31T23:00:00-05:00";
    }
    const zero = victims.yearZeroOpen;
    if (path === PATHS.emailOpenEvents && record.schedule_id === zero.schedule_id && record.opened_on === zero.opened_on) record.opened_on = "0000-01-01T00:00:00Z";
    const click = victims.click;
    if (path === PATHS.linkClickEvents && record.schedule_id === click.schedule_id && record.link === click.link && record.clicked_on === click.clicked_on) {
      record.link = LONG_LINK;
    }
    if (path === PATHS.campaign && record.uid === victims.other) (record.settings as Json).custom_unsub_text = "stop\ud83d";
    if (path === PATHS.domains && record.id === victims.domain) record.warmup_days_remaining = 5_000_000_000;
  }
  return body;
}

beforeAll(async () => {
  fixture = await openDeviatingFixture(databaseUrl(), "unstorable", deviate);
  victims = await chooseVictims(fixture.client);
  run = await runFullSync(fixture.context({ client: fixture.deviating }));
});
afterAll(async () => {
  await fixture?.close();
});

const CANNOT_STORE = /^holds characters PostgreSQL cannot store/;

describe("values PostgreSQL cannot store as they came", () => {
  it("fail no page and no stream: the run is partial only for the records whose key cannot be stored", () => {
    expect(run.failures.map((failure) => `${failure.stream}: ${failure.error.message}`)).toEqual([]);
    expect(run.outcome).toBe("partial");
    expect(run.rejected).toBe(4);
  });

  it("keep text with NUL characters and lone surrogates, U+FFFD in their place, naming each field with the characters written out", async () => {
    const db = fixture.warehouse.db;
    const lead = await db.selectFrom("leads").select(["sender_name", "_extra", "_field_issues"]).where("uid", "=", victims.lead.uid).executeTakeFirstOrThrow();
    expect(lead.sender_name).toBe("Ann\uFFFDLee");
    expect(lead._extra).toEqual({ "x\uFFFDnote": { text: "v\uFFFD", broken: "\uFFFD" } });
    const issues = (lead._field_issues as Record<string, Record<string, { reason: string; raw: unknown }>>).leads ?? {};
    expect(issues.sender_name).toMatchObject({ reason: expect.stringMatching(CANNOT_STORE), raw: "Ann\\u0000Lee" });
    expect(issues["x\uFFFDnote"]).toMatchObject({ reason: expect.stringMatching(/^its name holds characters PostgreSQL cannot store/), raw: "x\\u0000note" });
    expect(issues["x\uFFFDnote.text"]).toMatchObject({ reason: expect.stringMatching(CANNOT_STORE), raw: "v\\u0000" });
    expect(issues["x\uFFFDnote.broken"]).toMatchObject({ reason: expect.stringMatching(CANNOT_STORE), raw: "\\udc00" });

    const reply = await db.selectFrom("replies").select(["body_plain_text"]).where("id", "=", victims.replyId).executeTakeFirstOrThrow();
    expect(reply.body_plain_text).toBe("hi\uFFFDthere\uFFFD");
    const replyIssues = await db.selectFrom("field_issues").select(["source", "field", "reason"]).where("table_name", "=", "replies").where("record_key", "=", String(victims.replyId)).orderBy("source").execute();
    expect(replyIssues.map((issue) => [issue.source, issue.field])).toEqual([
      ["leads", "body_plain_text"],
      ["replies", "body_plain_text"],
    ]);

    const campaign = await db.selectFrom("campaigns").select(["custom_unsub_text", "_field_issues"]).where("uid", "=", victims.other).executeTakeFirstOrThrow();
    expect(campaign.custom_unsub_text).toBe("stop\uFFFD");
    expect(JSON.stringify(campaign._field_issues)).toContain("settings.custom_unsub_text");
  });

  it("keep every schedule, reply and click of the lead, and its campaign's other leads", async () => {
    const db = fixture.warehouse.db;
    const schedules = await db.selectFrom("schedules").select("id").where("lead_uid", "=", victims.lead.uid).execute();
    expect(schedules.map((row) => row.id).sort()).toEqual(victims.lead.schedules.map((item) => item.id).sort());
    const replyIds = victims.lead.schedules.flatMap((item) => item.replies.map((reply) => reply.id));
    expect(await db.selectFrom("replies").select("id").where("id", "in", replyIds).execute()).toHaveLength(replyIds.length);
    const leads = await db.selectFrom("leads").select(sql<number>`count(*)::int`.as("n")).where("campaign_uid", "=", victims.campaign).executeTakeFirstOrThrow();
    expect(leads.n).toBe(victims.leads - 1);
  });

  it("store no integer beyond its 4-byte column: NULL on the row, and the field named", async () => {
    const db = fixture.warehouse.db;
    const schedule = await db.selectFrom("schedules").select(["email_open_count", "_field_issues"]).where("id", "=", victims.lead.schedules[0]?.id as number).executeTakeFirstOrThrow();
    expect(schedule.email_open_count).toBeNull();
    expect(schedule._field_issues).toMatchObject({ leads: { email_open_count: { raw: 3_000_000_000 } } });
    const domain = await db.selectFrom("domains").select(["warmup_days_remaining", "_field_issues"]).where("id", "=", victims.domain).executeTakeFirstOrThrow();
    expect(domain.warmup_days_remaining).toBeNull();
    expect(domain._field_issues).toMatchObject({ domains: { warmup_days_remaining: { raw: 5_000_000_000 } } });
  });

  it("store a date-time of year 1 as that instant, and one past 9999-12-31 as NULL, the field named", async () => {
    const db = fixture.warehouse.db;
    const schedule = await db
      .selectFrom("schedules")
      .select([sql<string>`to_char(sent_on AT TIME ZONE 'UTC', ${INSTANT_SQL_FORMAT})`.as("sent_on"), "email_opened_on", "_field_issues"])
      .where("id", "=", victims.lead.schedules[0]?.id as number)
      .executeTakeFirstOrThrow();
    expect(schedule.sent_on).toBe("0001-01-01T00:00:00.000000Z");
    expect(schedule.email_opened_on).toBeNull();
    expect(schedule._field_issues).toMatchObject({ leads: { email_opened_on: { reason: expect.stringMatching(/^names no instant of years 1 to 9999 /), raw: "9999-12-31T23:59:59.9999999Z" } } });
    expect(run.fieldIssues).toMatchObject({ "schedules.email_opened_on": expect.any(Number) });
  });

  it("set aside, with their reason and a storable payload, the records whose key cannot be stored, and land the rest of their listing", async () => {
    const db = fixture.warehouse.db;
    const rejected = await db.selectFrom("rejected_records").select(["stream", "reason", "payload", "record_key", "campaign_uid"]).orderBy("stream").execute();
    const byStream = Object.fromEntries(rejected.filter((row) => (row.payload as Json).opened_on !== "0000-01-01T00:00:00Z").map((row) => [row.stream, row]));
    expect(byStream.leads?.reason).toMatch(/^uid: holds characters PostgreSQL cannot store.*\(a key field, so the record cannot be placed\)$/);
    expect((byStream.leads?.payload as Json).uid).toBe(`${victims.keyless.uid}\uFFFD`);
    expect(byStream.email_opens?.reason).toMatch(/^opened_on: .*\(a key field, so the record cannot be placed\)$/);
    expect(byStream.email_opens?.record_key).toBe(`schedule_id=${victims.open.schedule_id}`);
    const opens = await db.selectFrom("email_opens").select(sql<number>`count(*)::int`.as("n")).where("campaign_uid", "=", victims.campaign).executeTakeFirstOrThrow();
    expect(opens.n).toBe(victims.opens - 2);
    const yearZero = rejected.find((row) => (row.payload as Json).opened_on === "0000-01-01T00:00:00Z");
    expect(yearZero?.reason).toMatch(/^opened_on: names no instant of years 1 to 9999 .*\(a key field, so the record cannot be placed\)$/);
    expect(yearZero?.record_key).toBe(`schedule_id=${victims.yearZeroOpen.schedule_id}`);
    expect(byStream.link_clicks?.reason).toMatch(/^link: \d+ bytes, longer than the warehouse can index.*\(a key field, so the record cannot be placed\)$/);
    expect((byStream.link_clicks?.payload as Json).link).toBe(LONG_LINK);
    expect(byStream.link_clicks?.record_key).toBe(`schedule_id=${victims.click.schedule_id}|clicked_on=${victims.click.clicked_on}`);
  });

  it("rewrite no row when read again unchanged, and keep the records set aside", async () => {
    const db = fixture.warehouse.db;
    const startedAt = new Date();
    const second = await runFullSync(fixture.context({ client: fixture.deviating }));
    expect(second.failures).toEqual([]);
    expect(second.outcome).toBe("partial");
    for (const table of ["domains", "campaigns", "leads", "schedules", "replies", "link_clicks", "email_opens"]) {
      const touched = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where _synced_at >= ${startedAt}`.execute(db);
      expect({ table, touched: touched.rows[0]?.n }).toEqual({ table, touched: 0 });
    }
    // Still four, none resolved (whether each was read again depends on its stream's rhythm, not on its values).
    const rejected = await db.selectFrom("rejected_records").select(["stream", "resolved_at"]).orderBy("stream").execute();
    expect(rejected).toEqual([
      { stream: "email_opens", resolved_at: null },
      { stream: "email_opens", resolved_at: null },
      { stream: "leads", resolved_at: null },
      { stream: "link_clicks", resolved_at: null },
    ]);
  });
});
