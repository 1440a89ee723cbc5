import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { runFullSync } from "../../src/sync/runs.ts";
import { verify, type VerifyLine } from "../../src/sync/verify.ts";
import type { Lead } from "../../src/upstream/resources.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns, type ScriptedCampaign } from "../support/scripted-campaign.ts";

/** `verify --values` against an upstream scripted request by request: which values differ, in which rows and columns. */

const databaseUrl = useTestDatabase("verify_values");
const CAMPAIGN = "cmp_valued";
const scripted = useScriptedCampaigns(databaseUrl, CAMPAIGN);

const valuesLine = (lines: VerifyLine[], stream: string, table: string) => lines.find((line) => line.stream === stream && line.table === table);
const leadsOf = (h: ScriptedCampaign) => h.upstream.state.leads.get(CAMPAIGN) as Lead[];
const scheduleOf = (lead: Lead) => lead.schedules?.[0] as NonNullable<NonNullable<Lead["schedules"]>[number]>;

/** Leads L1..L3 (schedules 1001..1003); L1's schedule holds reply 501, listed by #13 too. */
async function syncedCampaign(prepare: (h: ScriptedCampaign) => void = () => undefined): Promise<ScriptedCampaign> {
  const h = await scripted({ status: "running", leads: 3, sentOn: "2026-05-01T09:05:00.000Z" });
  const reply = { id: 501, body_plain_text: "Tell me more", body_html: "<p>Tell me more</p>", received_on: "2026-05-02T08:00:00.000Z", reply_classification: "positive" as const };
  scheduleOf(leadsOf(h)[0] as Lead).replies = [reply];
  h.upstream.state.replies.set(CAMPAIGN, [{ ...reply, schedule_id: 1001, mail_from: "l1@example.com", subject: "Re: Step 1" }]);
  prepare(h);
  expect((await runFullSync(h.context())).outcome).toBe("succeeded");
  return h;
}

describe("verify --values", () => {
  it("names the campaign whose status and settings changed upstream after the sync, and the workspace whose credits did", async () => {
    const h = await syncedCampaign();
    expect((await verify(h.context(), { values: true })).problems).toBe(0);
    const campaign = h.upstream.state.campaigns[0] as (typeof h.upstream.state.campaigns)[number];
    campaign.status = "paused";
    campaign.campaign_paused = true;
    campaign.settings.daily_email_limit = 10;
    (h.upstream.state.workspaces[0] as (typeof h.upstream.state.workspaces)[number]).credits_remaining = 42;

    const result = await verify(h.context(), { values: true });
    const detail = valuesLine(result.lines, "campaign_detail", "campaigns");
    expect(detail).toMatchObject({ campaignUid: CAMPAIGN, status: "differs", upstream: 1, warehouse: 1, differingKeys: { count: 1, first: [CAMPAIGN] } });
    expect(detail?.columns).toEqual({ campaign_paused: 1, daily_email_limit: 1, status: 1 });
    const listed = valuesLine(result.lines, "campaigns", "campaigns");
    expect(listed).toMatchObject({ campaignUid: null, status: "differs", differingKeys: { count: 1, first: [CAMPAIGN] } });
    expect(listed?.columns).toEqual({ status: 1 });
    const workspace = valuesLine(result.lines, "workspaces", "workspaces");
    expect(workspace).toMatchObject({ status: "differs", differingKeys: { count: 1, first: ["1"] } });
    expect(workspace?.columns).toEqual({ credits_remaining: 1 });
    expect(result.problems).toBe(3);

    // Lag, not a wrong sync: the next sync writes what changed.
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    expect((await verify(h.context(), { values: true })).problems).toBe(0);
  });

  it("finds values the warehouse holds wrong: a reply's from the listing it counts, a lead's and a schedule's only from the walk of --deep=all", async () => {
    const h = await syncedCampaign();
    const db = h.warehouse.db;
    await db.updateTable("replies").set({ reply_classification: "negative" }).where("id", "=", 501).execute();
    await db.updateTable("leads").set({ sender_name: "Someone Else" }).where("uid", "=", "L2").execute();
    await db.updateTable("schedules").set({ status: "bounced" }).where("id", "=", 1003).execute();

    const shallow = await verify(h.context(), { values: true });
    expect(valuesLine(shallow.lines, "replies", "replies")).toMatchObject({ status: "differs", upstream: 1, differingKeys: { count: 1, first: ["501"] }, columns: { reply_classification: 1 } });
    expect(shallow.lines.filter((line) => line.stream === "leads" && line.table !== undefined)).toEqual([]);
    expect(shallow.problems).toBe(1);

    const deep = await verify(h.context(), { values: true, deep: "all" });
    const leadLine = valuesLine(deep.lines, "leads", "leads");
    expect(leadLine).toMatchObject({ status: "differs", upstream: 3, differingKeys: { count: 1, first: ["L2"] } });
    expect(leadLine?.columns).toEqual({ sender_name: 1 });
    const scheduleLine = valuesLine(deep.lines, "leads", "schedules");
    expect(scheduleLine).toMatchObject({ status: "differs", upstream: 3, differingKeys: { count: 1, first: ["1003"] } });
    expect(scheduleLine?.columns).toEqual({ status: 1 });
    // The copy of the reply nested in its schedule differs as the listing's does.
    expect(valuesLine(deep.lines, "leads", "replies")).toMatchObject({ status: "differs", differingKeys: { count: 1, first: ["501"] }, columns: { reply_classification: 1 } });
    expect(valuesLine(deep.lines, "leads", "contacts")).toMatchObject({ status: "ok", upstream: 3 });
  });

  it("compares each record once: a page's anchor with its own page, a listing read again (--deep after a count that disagrees) in place of its first read", async () => {
    const h = await scripted({ status: "running", leads: 150 });
    const reply = { id: 501, body_plain_text: "Tell me more", body_html: "<p>Tell me more</p>", received_on: "2026-05-02T08:00:00.000Z", reply_classification: "positive" as const };
    h.upstream.state.replies.set(CAMPAIGN, [{ ...reply, schedule_id: 1001, mail_from: "l1@example.com", subject: "Re: Step 1" }]);
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    const db = h.warehouse.db;
    await db.deleteFrom("leads").where("uid", "=", "L150").execute();
    await db.updateTable("replies").set({ reply_classification: "negative" }).where("id", "=", 501).execute();

    const result = await verify(h.context(), { values: true, deep: "mismatched" });
    expect(result.lines.find((line) => line.stream === "leads" && line.table === undefined)).toMatchObject({ status: "missing", missingKeys: { first: ["L150"] } });
    // Each lead is read once though the second page starts with the first one's last lead: the 149 held are
    // compared, and the one the warehouse lacks is named by this line too.
    expect(valuesLine(result.lines, "leads", "leads")).toMatchObject({ status: "missing", upstream: 150, warehouse: 149, missingKeys: { count: 1, first: ["L150"] }, differingKeys: { count: 0 } });
    expect(valuesLine(result.lines, "replies", "replies")).toMatchObject({ status: "differs", upstream: 1, differingKeys: { count: 1, first: ["501"] } });
  });

  it("names the rows the warehouse wrongly holds as deleted that no key set covers: a contact, an email sequence, a sending domain", async () => {
    const h = await syncedCampaign();
    expect((await verify(h.context(), { values: true, deep: "all" })).problems).toBe(0);
    const db = h.warehouse.db;
    // L1's contact (1001 + 1_000_000) though L1 is live and holds it, sequence 1 though every schedule sends it,
    // and the campaign's one sending domain though #2 lists it.
    await sql`UPDATE contacts SET _deleted_at = now() WHERE id = 1001001`.execute(db);
    await sql`UPDATE email_sequences SET _deleted_at = now() WHERE id = 1`.execute(db);
    await sql`UPDATE campaign_sending_domains SET _deleted_at = now() WHERE campaign_uid = ${CAMPAIGN}`.execute(db);

    const result = await verify(h.context(), { values: true, deep: "all" });
    expect(valuesLine(result.lines, "leads", "contacts")).toMatchObject({ status: "missing", upstream: 3, warehouse: 2, missingKeys: { count: 1, first: ["1001001"] }, differingKeys: { count: 0 } });
    // #9 still knows the sequence: the sync would not have deleted it.
    expect(valuesLine(result.lines, "leads", "email_sequences")).toMatchObject({ status: "missing", upstream: 1, warehouse: 0, missingKeys: { count: 1, first: ["1"] } });
    expect(valuesLine(result.lines, "campaign_detail", "campaign_sending_domains")).toMatchObject({ status: "missing", upstream: 1, warehouse: 0, missingKeys: { count: 1, first: [`${CAMPAIGN}|1`] } });
    // No other line names them (these tables have no key set, and no count that tells) but the account's check of
    // contacts against the live leads that hold them.
    expect(result.lines.filter((line) => line.status !== "ok").map((line) => `${line.stream} → ${line.table ?? ""}`)).toEqual([
      "campaign_detail → campaign_sending_domains",
      "leads → contacts",
      "leads → email_sequences",
      "contacts → ",
    ]);
    // The sending domain is read with #2 without --deep too.
    const shallow = await verify(h.context(), { values: true });
    expect(shallow.lines.filter((line) => line.status !== "ok").map((line) => [line.stream, line.table, line.missingKeys?.first])).toEqual([
      ["campaign_detail", "campaign_sending_domains", [`${CAMPAIGN}|1`]],
      ["contacts", undefined, ["1001001"]],
    ]);

    // Lost rather than held deleted, they are missing as much.
    await sql`DELETE FROM campaign_sending_domains WHERE campaign_uid = ${CAMPAIGN}`.execute(db);
    const lost = await verify(h.context(), { values: true });
    expect(valuesLine(lost.lines, "campaign_detail", "campaign_sending_domains")).toMatchObject({ status: "missing", missingKeys: { first: [`${CAMPAIGN}|1`] } });
  });

  it("names a live sending domain the campaign's detail no longer lists as extra", async () => {
    const h = await syncedCampaign();
    await sql`INSERT INTO campaign_sending_domains (campaign_uid, domain_id, _synced_at, _first_seen_at) VALUES (${CAMPAIGN}, 999, now(), now())`.execute(h.warehouse.db);
    const result = await verify(h.context(), { values: true });
    expect(valuesLine(result.lines, "campaign_detail", "campaign_sending_domains")).toMatchObject({ status: "extra", extraKeys: { count: 1, first: [`${CAMPAIGN}|999`] } });
    expect(result.problems).toBe(1);
  });

  it("names no row the warehouse rightly holds deleted: a reply the listing dropped that its schedule still carries, a sequence #9 no longer knows that schedules still name", async () => {
    const h = await syncedCampaign();
    // #13 no longer lists reply 501 (deleted once two reads in a row leave it out), then #9 answers 404 for
    // sequence 1 (deleted by the next sync); L1's schedule still carries both.
    h.upstream.state.replies.set(CAMPAIGN, []);
    for (const _ of [1, 2]) expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    h.upstream.state.sequences.delete(1);
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    const deleted = async (table: "replies" | "email_sequences", id: number) =>
      (await h.warehouse.db.selectFrom(table).select("_deleted_at").where("id", "=", id).executeTakeFirstOrThrow())._deleted_at !== null;
    // The sync holds both deleted: a schedule's copy never brings back a reply, and #9 decides a sequence.
    expect([await deleted("replies", 501), await deleted("email_sequences", 1)]).toEqual([true, true]);

    h.requested();
    const result = await verify(h.context(), { values: true, deep: "all" });
    expect(result.lines.filter((line) => line.status !== "ok")).toEqual([]);
    // Neither is read as a row of its table: the copy of the reply is not compared, and #9 was asked once for the sequence.
    expect(valuesLine(result.lines, "leads", "replies")).toBeUndefined();
    expect(valuesLine(result.lines, "leads", "email_sequences")).toBeUndefined();
    expect(h.requested().filter((path) => path === "/api/v1/email-sequence/")).toHaveLength(1);
  });

  it("names nothing after a clean sync of values tolerant reading changed: U+FFFD for NUL and lone surrogates, numeric strings, overflow as NULL, nanoseconds, jsonb numbers", async () => {
    const h = await scripted({ status: "running", leads: 2, sentOn: "2026-05-01T09:05:00.000Z" });
    const [first, second] = leadsOf(h) as [Lead, Lead];
    (first as { sender_name: unknown }).sender_name = "Nul\u0000 and \ud800 lone";
    (scheduleOf(first) as unknown as Record<string, unknown>).email_open_count = "3";
    (scheduleOf(second) as unknown as Record<string, unknown>).email_open_count = 5_000_000_000;
    (h.upstream.state.workspaces[0] as unknown as Record<string, unknown>).credits_remaining = "77";
    const reply = { id: 501, body_plain_text: "x\u0000y", body_html: "<p>x</p>", received_on: "2026-05-02T08:00:00.123456789Z", reply_classification: "positive" as const };
    scheduleOf(first).replies = [reply];
    h.upstream.state.replies.set(CAMPAIGN, [{ ...reply, schedule_id: 1001, mail_from: "a@b", subject: "Re" }]);
    (h.upstream.state.campaigns[0] as unknown as Record<string, unknown>).selected_contact_lists = [{ uid: "cl\u0000", n: 1.0, big: 1.2345678901234567e19 }];
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    const result = await verify(h.context(), { values: true, deep: "all" });
    expect(result.lines.filter((line) => line.status !== "ok")).toEqual([]);
  });

  it("does not compare a field that deviated upstream: tolerant reading keeps the value the warehouse holds", async () => {
    const h = await syncedCampaign();
    (h.upstream.state.campaigns[0] as { status: unknown }).status = true;
    (scheduleOf(leadsOf(h)[0] as Lead) as { status: unknown }).status = null;

    const result = await verify(h.context(), { values: true, deep: "all" });
    expect(result.problems).toBe(0);
    for (const [stream, table] of [["campaign_detail", "campaigns"], ["campaigns", "campaigns"], ["leads", "schedules"]] as const) {
      expect(valuesLine(result.lines, stream, table)).toMatchObject({ status: "ok", differingKeys: { count: 0 } });
    }
    // The row was compared, on its other columns.
    expect(valuesLine(result.lines, "leads", "schedules")?.upstream).toBe(3);
  });

  it("compares instants to the microsecond, jsonb as values, and a click's id only where a copy gives one", async () => {
    const click = { id: 77, link: "https://example.com/a", clicked_on: "2026-05-02T10:00:00.654321Z" };
    const h = await syncedCampaign((made) => {
      const schedule = scheduleOf(leadsOf(made)[0] as Lead);
      schedule.schedule_datetime = "2026-05-01T09:00:00.123456Z";
      schedule.link_click_events = [click];
      made.upstream.state.clicks.set(CAMPAIGN, [{ schedule_id: 1001, link: click.link, clicked_on: click.clicked_on }]);
      // Keys in an order PostgreSQL's jsonb does not keep.
      (made.upstream.state.campaigns[0] as { selected_contact_lists: unknown }).selected_contact_lists = [{ uid: "cl_1", b: 1, a: [2, 3] }];
    });
    expect((await verify(h.context(), { values: true, deep: "all" })).problems).toBe(0);

    const db = h.warehouse.db;
    await sql`UPDATE schedules SET schedule_datetime = '2026-05-01T09:00:00.123457Z' WHERE id = 1001`.execute(db);
    await sql`UPDATE campaigns SET selected_contact_lists = '[{"a": [2, 3], "b": 2, "uid": "cl_1"}]' WHERE uid = ${CAMPAIGN}`.execute(db);
    await sql`UPDATE link_clicks SET id = 78 WHERE schedule_id = 1001`.execute(db);

    const result = await verify(h.context(), { values: true, deep: "all" });
    expect(valuesLine(result.lines, "leads", "schedules")).toMatchObject({ status: "differs", differingKeys: { first: ["1001"] }, columns: { schedule_datetime: 1 } });
    expect(valuesLine(result.lines, "campaign_detail", "campaigns")?.columns).toEqual({ selected_contact_lists: 1 });
    expect(valuesLine(result.lines, "leads", "link_clicks")).toMatchObject({
      status: "differs",
      differingKeys: { count: 1, first: [`1001|${click.link}|${click.clicked_on}`] },
      columns: { id: 1 },
    });
    // The listing's click has no id: it keeps the one the copy gave, so it has none to differ in.
    expect(valuesLine(result.lines, "link_clicks", "link_clicks")).toMatchObject({ status: "ok", upstream: 1 });
    expect(result.problems).toBe(3);
  });
});
