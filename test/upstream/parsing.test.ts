import { describe, expect, it } from "vitest";
import { InvalidRecordError, UpstreamError, type ReadRecord, type RecordOf, type UpstreamClient } from "../../src/upstream/client.ts";
import { PATHS } from "../../src/upstream/endpoints.ts";
import { emailOpens } from "../../src/sync/streams/email-opens.ts";
import { leadRows, recordsBelowLead } from "../../src/sync/streams/leads.ts";
import { unknownFields } from "../../src/sync/mapping.ts";
import { readRecord, readRecords, type RejectedRecord } from "../../src/upstream/parsing.ts";
import { campaignListItem, campaignSettings, contactList, emailOpenEvent, emailSequence } from "../../src/upstream/resources.ts";
import { readTolerant } from "../../src/upstream/tolerant.ts";
import { rejectionOf, sendJson, useLocalServers } from "./support.ts";

const KEY = "parsing-test-key";

function campaignItem(uid: string) {
  return { uid, name: `Campaign ${uid}`, workspace_id: 1, created_on: "2026-01-02T03:04:05Z", status: "running", brand_new_field: { kept: true } };
}

const local = useLocalServers();

function clientFor(url: string): UpstreamClient {
  return local.connect({ baseUrl: url, apiKey: KEY, requestsPerSecond: 1000, retryBaseMs: 1, retryCapMs: 5 });
}


/** Lead l1 with one schedule (10), as the spec shows them, `schedule` replacing its fields. */
function leadWithSchedule(schedule: Record<string, unknown>) {
  return {
    uid: "l1",
    contact: { id: 1, email_id: "a@b.test", bounced: false, unsubscribed: false },
    sender_email_address: "s@b.test",
    sender_name: "S",
    schedules: [
      {
        id: 10,
        email_data: { id: 3, subject: "s", body: "b", email_content_type: "text/plain" },
        link_click_events: [],
        replies: [],
        status: "created",
        schedule_datetime: "2026-01-02T03:04:05Z",
        sent_on: null,
        reply_received: false,
        email_opened: false,
        email_opened_on: null,
        email_open_count: 0,
        ...schedule,
      },
    ],
  };
}
describe("tolerant parsing", () => {
  it("names a date-time rounded to the microsecond, and one in another form as well when it is both", () => {
    const open = (openedOn: string) => readTolerant(emailOpenEvent, { schedule_id: 1, opened_on: openedOn });
    expect(open("2026-05-01T10:00:00.1234567Z")).toMatchObject({
      value: { opened_on: "2026-05-01T10:00:00.123457Z" },
      issues: [{ path: "opened_on", reason: "more fraction digits than the warehouse holds; read as 2026-05-01T10:00:00.123457Z (rounded to the microsecond)" }],
    });
    expect(open("2026-05-01T12:00:00.1234567+02:00").issues).toMatchObject([
      { reason: "date-time not in the documented UTC form, and more fraction digits than the warehouse holds; read as 2026-05-01T10:00:00.123457Z (rounded to the microsecond)" },
    ]);
    expect(open("2026-05-01T10:00:00.123456000Z").issues).toEqual([]);
  });

  it("names a field left out even where its schema takes any JSON value, and keeps a null there as data", () => {
    const list = { uid: "cl_1", workspace_id: 1, name: "List", created_on: "2026-01-02T03:04:05Z", status: "ready", source: "api", has_unsubscribe_column: false, unsubscribe_column_name: "" };
    const missing = readTolerant(contactList, list);
    expect(missing.issues).toEqual([{ path: "available_columns", reason: "missing", raw: null }]);
    expect(missing.value).toMatchObject({ uid: "cl_1", available_columns: null });
    expect(readTolerant(contactList, { ...list, available_columns: null }).issues).toEqual([]);
    expect(readTolerant(contactList, { ...list, available_columns: ["email"] }).issues).toEqual([]);
    const sequence = { id: 1, subject: "s", body: "b", order: 1, next_message_days: 0, score: 1, verdict: "good", label: "passed", blocked_reason: "", is_flagged_for_approval: false, block_approval: false, email_content_type: "text/plain" };
    expect(readTolerant(emailSequence, { ...sequence, order: "1" }).issues.map((issue) => issue.path)).toEqual(["order", "suggestions"]);
  });


  it("keeps a record whose other fields deviate, naming each, and rejects only the record without a usable key", async () => {
    const deviating = { uid: "c2", name: 42, workspace_id: "7", created_on: "yesterday", status: "sleeping" };
    const keyless = { name: "no uid", workspace_id: 1, created_on: "2026-01-02T03:04:05Z", status: "running" };
    const server = await local.serve((_request, response) =>
      sendJson(response, 200, { data: [campaignItem("c1"), deviating, keyless, campaignItem("c3")], total: 4 }),
    );
    const page = await clientFor(server.url).page("campaigns", { offset: 0 });

    expect(page.records.map((record) => record.value.uid)).toEqual(["c1", "c2", "c3"]);
    expect(page.records[0]).toMatchObject({ value: { brand_new_field: { kept: true } }, issues: [] });
    expect(page.records[1]?.value).toMatchObject({ uid: "c2", name: "42", workspace_id: 7, created_on: null, status: "sleeping" });
    expect(page.records[1]?.issues).toEqual([
      { path: "name", reason: "a number where a string is documented; read as its decimal text", raw: 42 },
      { path: "workspace_id", reason: "integer sent as a string; read as 7", raw: "7" },
      { path: "created_on", reason: "not an ISO 8601 date-time; not stored", raw: "yesterday" },
      { path: "status", reason: expect.stringMatching(/^not one of the documented values \(creating, .*\); kept as text$/), raw: "sleeping" },
    ]);
    expect(page).toMatchObject({ total: 4, offset: 0, limit: 100 });
    expect(page.rejected).toEqual([
      { stream: "campaigns", payload: keyless, recordKey: null, readableKey: {}, keyIdentifies: false, position: 2, reason: "uid: missing (a key field, so the record cannot be placed)" },
    ]);
    expect(server.requests).toEqual([`GET ${PATHS.campaigns}?limit=100&offset=0`]);
  });

  it("replaces NUL characters and lone surrogates anywhere in a record, field names and any-JSON fields included, and names each field", () => {
    const list = { uid: "cl_1", workspace_id: 1, name: "A\u0000B", created_on: "2026-01-02T03:04:05Z", status: "ready", source: "api", has_unsubscribe_column: false, unsubscribe_column_name: "" };
    const arrived = { ...list, available_columns: ["email", "x\ud800"], "odd\u0000name": { deep: ["\udfff", "🔥"] } };
    const outcome = readRecord("contact_lists", arrived);
    if (!("record" in outcome)) throw new Error("rejected");
    const { value, issues, raw } = outcome.record;
    expect(value).toMatchObject({ name: "A\uFFFDB", available_columns: ["email", "x\uFFFD"], "odd\uFFFDname": { deep: ["\uFFFD", "🔥"] } });
    expect(raw).toEqual({ ...list, name: "A\uFFFDB", available_columns: ["email", "x\uFFFD"], "odd\uFFFDname": { deep: ["\uFFFD", "🔥"] } });
    expect(issues.map((issue) => [issue.path, issue.raw])).toEqual([
      ["name", "A\\u0000B"],
      ["available_columns.1", "x\\ud800"],
      ["odd\uFFFDname", "odd\\u0000name"],
      ["odd\uFFFDname.deep.0", "\\udfff"],
    ]);
    // What arrived is not changed, and a record with nothing to replace is passed on as it came.
    expect(arrived.name).toBe("A\u0000B");
    const clean = { ...list, name: "A 🔥 B", available_columns: null };
    const cleanOutcome = readRecord("contact_lists", clean);
    expect("record" in cleanOutcome && cleanOutcome.record.raw).toBe(clean);
  });

  it("keeps a field named __proto__ or constructor where it came, as data", () => {
    const arrived = JSON.parse('{"uid":"c1","name":"N\\u0000","workspace_id":1,"created_on":"2026-01-02T03:04:05Z","status":"running","__proto__":{"a":1},"constructor":"x"}') as object;
    const outcome = readRecord("campaigns", arrived);
    if (!("record" in outcome)) throw new Error("rejected");
    expect(Object.getPrototypeOf(outcome.record.raw)).toBe(Object.prototype);
    expect(JSON.stringify(outcome.record.raw)).toContain('"__proto__":{"a":1}');
    expect(Object.entries(unknownFields(outcome.record.value, campaignListItem) ?? {})).toEqual([
      ["__proto__", { a: 1 }],
      ["constructor", "x"],
    ]);
  });

  it("keeps a field named __proto__ in a clean answer, at any depth, where a schema's parse would leave it out", async () => {
    const text = JSON.stringify([campaignItem("c1"), campaignItem("c2")]).replace('"brand_new_field"', '"__proto__":{"tier":"gold"},"brand_new_field"');
    const server = await local.serve((_request, response) => sendJson(response, 200, { data: JSON.parse(text) as unknown, total: 2 }));
    const page = await clientFor(server.url).page("campaigns", { offset: 0 });
    const extras = page.records.map((record) => unknownFields(record.value, campaignListItem));
    expect(extras.map((extra) => Object.keys(extra ?? {}))).toEqual([["__proto__", "brand_new_field"], ["brand_new_field"]]);
    expect(Object.getPrototypeOf(extras[0])).toBe(Object.prototype);
    expect(JSON.stringify(extras[0])).toBe('{"__proto__":{"tier":"gold"},"brand_new_field":{"kept":true}}');

    const lead = { uid: "l1", contact: JSON.parse('{"id":1,"email_id":"a@b.test","bounced":false,"unsubscribed":false,"__proto__":{"vip":true}}') as object, schedules: [], sender_email_address: "s@b.test", sender_name: "S" };
    const outcome = readRecord("leads", lead);
    if (!("record" in outcome)) throw new Error("rejected");
    const rows = leadRows(outcome.record, { scope: { account: "a", campaignUid: "c1" }, observedAt: new Date(), reject: () => undefined });
    expect(JSON.stringify(rows.contacts?.[0]?._extra)).toBe('{"__proto__":{"vip":true}}');
  });

  it("rejects a record whose key text cannot be stored or indexed, without spelling that key out", () => {
    const item = { name: "n", workspace_id: 1, created_on: "2026-01-02T03:04:05Z", status: "running" };
    const { records, rejected } = readRecords("campaigns", [
      { ...item, uid: "c\u0000" },
      { ...item, uid: "c".repeat(2_001) },
      { ...item, uid: "é".repeat(666) },
    ]);
    expect(records.map((record) => record.value.uid)).toEqual(["é".repeat(666)]);
    expect(rejected.map((record) => [record.reason, record.recordKey])).toEqual([
      [expect.stringMatching(/^uid: holds characters PostgreSQL cannot store .*\(a key field, so the record cannot be placed\)$/), null],
      ["uid: 2001 bytes, longer than the warehouse can index in a key (2000) (a key field, so the record cannot be placed)", null],
    ]);
    const clicks = readRecords("link_clicks", [{ schedule_id: 5, link: `https://x.test/${"q".repeat(2_100)}`, clicked_on: "2026-01-02T03:04:05Z" }]);
    expect(clicks.rejected[0]).toMatchObject({ recordKey: "schedule_id=5|clicked_on=2026-01-02T03:04:05Z", keyIdentifies: false });
  });

  it("sets aside a click nested in a schedule whose link cannot be stored or indexed, and keeps the schedule", () => {
    const click = (id: number, link: string) => ({ id, link, clicked_on: "2026-01-02T03:04:05Z" });
    const lead = leadWithSchedule({ link_click_events: [click(1, "https://x.test/ok"), click(2, "https://x.test/\u0000"), click(3, `https://x.test/${"q".repeat(2_100)}`)] });
    const outcome = readRecord("leads", lead);
    if (!("record" in outcome)) throw new Error("rejected");
    const parts: Omit<RejectedRecord, "stream" | "parentKey">[] = [];
    const rows = leadRows(outcome.record, { scope: { account: "a", campaignUid: "c1" }, observedAt: new Date(), reject: (part) => parts.push(part) });
    expect(rows.schedules?.map((row) => row.id)).toEqual([10]);
    expect(rows.link_clicks?.map((row) => row.id)).toEqual([1]);
    expect(parts.map((part) => part.reason)).toEqual([
      expect.stringMatching(/^schedules\.0\.link_click_events\.1\.link: holds characters PostgreSQL cannot store/),
      expect.stringMatching(/^schedules\.0\.link_click_events\.2\.link: 2115 bytes, longer than the warehouse can index/),
    ]);
  });

  it("reads one record sent where a list of them is documented as a one-item list, names the list, and keeps the raw record for a part set aside", () => {
    const SINGLE = "a single item where a list is documented; read as a one-item list";
    const click = { id: 1, link: "https://x.test/lone", clicked_on: "2026-01-02T03:04:05Z" };
    const [schedule] = leadWithSchedule({ link_click_events: click }).schedules;
    const lead = { ...leadWithSchedule({}), schedules: schedule };
    const outcome = readRecord("leads", lead);
    if (!("record" in outcome)) throw new Error("rejected");
    expect(outcome.record.issues).toEqual([
      { path: "schedules", reason: SINGLE, raw: schedule },
      { path: "schedules.0.link_click_events", reason: SINGLE, raw: click },
    ]);
    const context = { scope: { account: "a", campaignUid: "c1" }, observedAt: new Date() };
    const parts: Omit<RejectedRecord, "stream" | "parentKey">[] = [];
    const rows = leadRows(outcome.record, { ...context, reject: (part) => parts.push(part) });
    expect(parts).toEqual([]);
    expect(rows.link_clicks?.map((row) => [row.id, row.link])).toEqual([[1, "https://x.test/lone"]]);
    // The issue with the list says nothing of its item's fields: a sent_on that is null is NULL, not left out.
    expect(rows.schedules).toEqual([expect.objectContaining({ id: 10, sent_on: null, _field_issues: { link_click_events: { reason: SINGLE, raw: click } } })]);
    expect(rows.leads?.[0]?._field_issues).toEqual({ schedules: { reason: SINGLE, raw: schedule } });
    expect(recordsBelowLead(lead)).toBe(3);

    // A single schedule that cannot be placed is set aside as it came, with what it held.
    const keyless = { ...leadWithSchedule({}), schedules: { ...schedule, id: null } };
    const read = readRecord("leads", keyless);
    if (!("record" in read)) throw new Error("rejected");
    leadRows(read.record, { ...context, reject: (part) => parts.push(part) });
    expect(parts).toEqual([{ reason: "schedules.0.id: expected an integer, got null", payload: keyless.schedules, recordKey: null, skipped: 1 }]);

    // Only a list of records takes one alone: a list of ids sent as an object is still a value of the wrong type.
    expect(readTolerant(campaignSettings, { sending_domains: { id: 1 } }).issues.find((issue) => issue.path === "sending_domains")?.reason).toBe("expected an array, got an object");
  });

  it("sets aside a schedule's email_data whose id cannot be read, as it came, and keeps the schedule without its sequence", () => {
    const context = { scope: { account: "a", campaignUid: "c1" }, observedAt: new Date() };
    const withIdNull = { id: null, subject: "Step 1", body: "<p>Hello</p>", email_content_type: "text/html" };
    const asText = JSON.stringify({ ...withIdNull, id: 1 });
    const reasons = [];
    for (const emailData of [withIdNull, asText]) {
      const outcome = readRecord("leads", leadWithSchedule({ email_data: emailData }));
      if (!("record" in outcome)) throw new Error("rejected");
      const parts: Omit<RejectedRecord, "stream" | "parentKey">[] = [];
      const rows = leadRows(outcome.record, { ...context, reject: (part) => parts.push(part) });
      expect(parts).toEqual([{ reason: expect.any(String), payload: emailData, recordKey: null, skipped: 0 }]);
      reasons.push(parts[0]?.reason);
      expect(rows.schedules).toEqual([expect.objectContaining({ id: 10, email_sequence_id: undefined })]);
      expect(rows.email_sequences).toEqual([]);
      expect(rows.leads?.map((row) => row.uid)).toEqual(["l1"]);
    }
    expect(reasons).toEqual(["schedules.0.email_data.id: expected an integer, got null", "schedules.0.email_data: expected an object, got a string"]);
    // An email_data that is null or missing holds nothing to lose: it is named on the schedule, not set aside.
    for (const emailData of [null, undefined]) {
      const outcome = readRecord("leads", leadWithSchedule({ email_data: emailData }));
      const parts: unknown[] = [];
      if ("record" in outcome) leadRows(outcome.record, { ...context, reject: (part) => parts.push(part) });
      expect(parts).toEqual([]);
    }
  });

  it("reads a date-time of year 1 as that instant, and names one the warehouse cannot hold instead of passing it as valid", () => {
    const UNHELD = expect.stringMatching(/^names no instant of years 1 to 9999 .*; not stored$/);
    const opens = readRecords("email_opens", [
      { schedule_id: 5, opened_on: "0001-01-01T00:00:00Z" },
      { schedule_id: 5, opened_on: "0000-01-01T00:00:00Z" },
    ]);
    expect(opens.records.map((record) => [record.value.opened_on, record.issues])).toEqual([["0001-01-01T00:00:00Z", []]]);
    const context = { scope: { account: "a", campaignUid: "c1" }, observedAt: new Date(), reject: () => undefined };
    expect(emailOpens.rows(opens.records[0] as ReadRecord<RecordOf<"email_opens">>, context).email_opens?.[0]?.opened_on).toBe("0001-01-01T00:00:00.000000Z");
    expect(opens.rejected).toEqual([
      expect.objectContaining({ recordKey: "schedule_id=5", reason: expect.stringMatching(/^opened_on: names no instant of years 1 to 9999 .*\(a key field, so the record cannot be placed\)$/) }),
    ]);
    const clicks = readRecords("link_clicks", [{ schedule_id: 5, link: "https://x.test/", clicked_on: "9999-12-31T23:59:59.9999999Z" }]);
    expect(clicks.rejected[0]?.reason).toMatch(/^clicked_on: names no instant of years 1 to 9999 /);

    const lead = leadWithSchedule({
      link_click_events: [{ id: 1, link: "https://x.test/", clicked_on: "0000-01-01T00:00:00Z" }],
      status: "sent",
      schedule_datetime: "0001-01-01T00:00:00Z",
      sent_on: "0000-12-31T23:59:59Z",
    });
    const outcome = readRecord("leads", lead);
    if (!("record" in outcome)) throw new Error("rejected");
    expect(outcome.record.issues).toEqual([
      { path: "schedules.0.link_click_events.0.clicked_on", reason: UNHELD, raw: "0000-01-01T00:00:00Z" },
      { path: "schedules.0.sent_on", reason: UNHELD, raw: "0000-12-31T23:59:59Z" },
    ]);
    const parts: Omit<RejectedRecord, "stream" | "parentKey">[] = [];
    const rows = leadRows(outcome.record, { ...context, reject: (part) => parts.push(part) });
    const [schedule] = rows.schedules ?? [];
    // Left out, not NULL: a stored sent_on stays, and the row says why.
    expect(schedule).toMatchObject({ schedule_datetime: "0001-01-01T00:00:00.000000Z", sent_on: undefined });
    expect(Object.keys(schedule?._field_issues as object)).toEqual(["sent_on"]);
    expect(rows.link_clicks).toEqual([]);
    expect(parts.map((part) => part.reason)).toEqual([expect.stringMatching(/^schedules\.0\.link_click_events\.0\.clicked_on: names no instant of years 1 to 9999 /)]);
  });

  it("keeps an integer outside its documented range where its column holds it: a workspace id in bigint, not a count in integer", () => {
    const workspace = { id: 3_000_000_000, created_on: "2026-01-01T00:00:00Z", subscription_plan: "pro", name: "Main", credits_remaining: 3_000_000_000, next_renewal_date: "2026-02-01T00:00:00Z", billing_period: "monthly", time_zone: "UTC", total_emails_sent: 0, total_replies_received: 0 };
    const { records, rejected } = readRecords("workspaces", [workspace]);
    expect(rejected).toEqual([]);
    expect(records[0]?.value).toMatchObject({ id: 3_000_000_000, credits_remaining: null });
    expect(records[0]?.issues).toEqual([
      { path: "id", reason: "outside the documented range -2147483648..2147483647; kept", raw: 3_000_000_000 },
      { path: "credits_remaining", reason: "outside -2147483648..2147483647 and outside its integer column; not stored", raw: 3_000_000_000 },
    ]);
    const sequence = { id: 1, subject: "s", body: "b", order: 1, next_message_days: 40_000, score: 1, verdict: "good", suggestions: null, label: "passed", blocked_reason: "", is_flagged_for_approval: false, block_approval: false, email_content_type: "text/plain" };
    expect(readTolerant(emailSequence, sequence)).toMatchObject({ value: { next_message_days: 40_000 }, issues: [{ path: "next_message_days", reason: "outside the documented range 0..32767; kept" }] });
  });

  it("reads no integer beyond 2^53 - 1, as a number or as text: a key one sets its record aside, another field is named and not stored", () => {
    const reply = { schedule_id: 3, body_plain_text: "hi", body_html: "<p>hi</p>", received_on: "2026-01-01T00:00:00Z", mail_from: "a@b.test", subject: "Re", reply_classification: "positive" };
    // JSON.parse reads both numbers as 9007199254740992: stored, they would be one reply.
    const withId = (id: string) => JSON.stringify({ ...reply, id: "ID" }).replace('"ID"', id);
    const numbers = JSON.parse(`[${withId("9007199254740993")}, ${withId("9007199254740992")}]`) as unknown[];
    const { records, rejected } = readRecords("replies", [...numbers, { ...reply, id: "12345678901234567" }, { ...reply, id: "9007199254740991" }]);
    expect(records.map((record) => record.value.id)).toEqual([9_007_199_254_740_991]);
    expect(rejected.map((record) => record.reason)).toEqual(Array(3).fill("id: beyond 2^53 - 1, cannot be read exactly; not stored (a key field, so the record cannot be placed)"));
    expect(rejected.map((record) => record.position)).toEqual([0, 1, 2]);

    const domain = { id: 1, domain: "d.test", status: "active", created_on: "2026-01-01T00:00:00Z", deletion_started_on: null, setup_complete: true, naming_strategy: "n", custom_name: "", warmup_days_remaining: 0, redirect_subdomains_to: "", warmup_active_days: 0 };
    const read = readRecords("domains", [{ ...domain, workspace_id: "12345678901234567" }]);
    expect(read.records[0]?.value).toMatchObject({ id: 1, workspace_id: null });
    expect(read.records[0]?.issues).toEqual([{ path: "workspace_id", reason: "beyond 2^53 - 1, cannot be read exactly; not stored", raw: "12345678901234567" }]);
    expect(readTolerant(emailSequence, { id: 1.5 }).issues[0]).toEqual({ path: "id", reason: "expected an integer, got a fraction; not stored", raw: 1.5 });
  });

  it("reads an integer sent as a numeric string in decimal or exponent form (\"1001.0\", \"1.001e3\") as the integer it names, as the JSON numbers 1001.0 and 1.001e3 are", () => {
    const sequence = { subject: "s", body: "b", order: 1, next_message_days: 2, score: 80, verdict: "v", suggestions: [], label: "passed", blocked_reason: "", is_flagged_for_approval: false, block_approval: false, email_content_type: "text/html" };
    const read = (id: unknown) => {
      const outcome = readRecord("email_sequences", { ...sequence, id });
      return "record" in outcome ? outcome.record.value.id : `rejected: ${outcome.rejected.reason}`;
    };
    // What JSON.parse already turns into the integer, the same text as a string must not cost the record.
    expect([read(1001.0), read(1.001e3), read("1001")]).toEqual([1001, 1001, 1001]);
    expect([read("1001.0"), read("1.001e3"), read(" -1.5E1 "), read("+7"), read("100100e-2")]).toEqual([1001, 1001, -15, 7, 1001]);
    expect(readTolerant(emailSequence, { ...sequence, id: "1.001e3" }).issues).toEqual([{ path: "id", reason: "integer sent as a string; read as 1001", raw: "1.001e3" }]);
    // A fraction is one as text too, also where the nearest double is an integer; past 2^53 - 1 is not read exactly.
    const FRACTION = "id: expected an integer, got a fraction; not stored (a key field, so the record cannot be placed)";
    const BEYOND = "id: beyond 2^53 - 1, cannot be read exactly; not stored (a key field, so the record cannot be placed)";
    expect([read("12.5"), read("1001.00000000000000001"), read("1e-400"), read("1e400"), read("9007199254740993.0")]).toEqual([FRACTION, FRACTION, FRACTION, BEYOND, BEYOND].map((reason) => `rejected: ${reason}`));
    // Only decimal notation: what Number() also reads (hex, binary, octal, Infinity, empty text) is not an integer sent as text.
    const WRONG_TYPE = "rejected: id: expected an integer, got a string (a key field, so the record cannot be placed)";
    expect(["0x10", "0b11", "0o17", "Infinity", "", " ", "1_000", "1.", ".5", "1e", "--1"].map(read)).toEqual(Array(11).fill(WRONG_TYPE));
  });

  it("reads a string sent as an integer it can read exactly as its decimal text, a key included, and names it; the strict schema still refuses it", () => {
    const item = { uid: 12345, name: "Numeric", workspace_id: 1, created_on: "2026-01-02T03:04:05Z", status: "running" };
    // The strict try refuses it, so the tolerant read is the one that names it.
    expect(campaignListItem.safeParse(item).success).toBe(false);
    expect(readRecord("campaigns", item)).toEqual({
      record: { value: { ...item, uid: "12345" }, issues: [{ path: "uid", reason: "a number where a string is documented; read as its decimal text", raw: 12345 }], raw: item },
    });
    // Any other number could make two keys one: a fraction's text as sent cannot be told, and JSON.parse rounds past 2^53 - 1.
    const reasons = [1.5, 2 ** 53].map((uid) => {
      const outcome = readRecord("campaigns", { ...item, uid });
      return "rejected" in outcome ? outcome.rejected.reason : "placed";
    });
    expect(reasons).toEqual([
      "uid: a number where a string is documented, not an integer, its text as sent cannot be told; not stored (a key field, so the record cannot be placed)",
      "uid: a number where a string is documented, beyond 2^53 - 1, its digits cannot be read exactly; not stored (a key field, so the record cannot be placed)",
    ]);
    // An enum sent as a code is a value of its own, kept as text as any value the spec does not list; a fraction is not read.
    const coded = readRecord("campaigns", { ...item, uid: "c1", status: 3 });
    expect("record" in coded && coded.record.value.status).toBe("3");
    expect("record" in coded && coded.record.issues).toEqual([
      { path: "status", reason: "a number where one of the documented values (creating, created, scheduled, running, paused, complete, cancelled, failed) is; kept as its decimal text", raw: 3 },
    ]);
    const fraction = readRecord("campaigns", { ...item, uid: "c1", status: 3.5 });
    expect("record" in fraction && [fraction.record.value.status, fraction.record.issues[0]?.reason]).toEqual([null, "expected a string, got a number"]);
    // The text is held to the string's schema: no integer is a time of day.
    const settings = readTolerant(campaignSettings, { from_time: 100000 });
    expect(settings.value).toMatchObject({ from_time: null });
    expect(settings.issues.find((issue) => issue.path === "from_time")).toEqual({ path: "from_time", reason: "must be HH:MM:SS on a 24-hour clock; not stored", raw: 100000 });
  });

  it("keeps no character PostgreSQL cannot store in the message of an error (it is kept with the run)", async () => {
    const server = await local.serve((_request, response) => sendJson(response, 404, { message: "no lead l\u0000x\ud800" }));
    const error = await rejectionOf(clientFor(server.url).getLead("l"));
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).message).toBe(`GET ${PATHS.lead}: failed with 404: no lead l\uFFFDx\uFFFD`);
  });

  it("keeps the key fields it could read of a rejected record, by name and spelled out", () => {
    const { rejected } = readRecords("replies", [{ id: 77, schedule_id: null, received_on: "2026-05-01T12:00:00.000Z" }]);
    expect(rejected).toEqual([expect.objectContaining({ recordKey: "id=77", readableKey: { id: 77 } })]);
  });

  it("reads a single record that deviates, and turns one without a usable key into an InvalidRecordError, without retrying", async () => {
    const server = await local.serve((_request, response, index) =>
      sendJson(response, 200, index === 0 ? { uid: "c1", status: "sleeping" } : { uid: "", status: "running" }),
    );
    const upstream = clientFor(server.url);
    const { record } = await upstream.getCampaign("c1");
    expect(record.value).toMatchObject({ uid: "c1", status: "sleeping", settings: null, created_on: null });
    expect(record.issues.map((issue) => issue.path)).toContain("settings");

    const error = await rejectionOf(upstream.getCampaign("c1"));
    expect(error).toBeInstanceOf(InvalidRecordError);
    const invalid = error as InvalidRecordError;
    expect(invalid).toMatchObject({ retryable: false, status: 200, endpoint: PATHS.campaign, method: "GET", attempts: 1 });
    expect(invalid.rejected).toMatchObject({ stream: "campaign_detail", payload: { uid: "", status: "running" }, reason: "uid: empty (a key field, so the record cannot be placed)" });
    expect(server.requests).toEqual([`GET ${PATHS.campaign}?campaign_uid=c1`, `GET ${PATHS.campaign}?campaign_uid=c1`]);
  });

  it("accepts workspaces as a bare array and as an envelope", async () => {
    const workspace = {
      id: 7,
      created_on: "2026-01-01T00:00:00Z",
      subscription_plan: "pro",
      name: "Main",
      credits_remaining: 5,
      next_renewal_date: null,
      billing_period: "monthly",
      time_zone: "UTC",
      total_emails_sent: 0,
      total_replies_received: 0,
    };
    const server = await local.serve((_request, response, index) =>
      sendJson(response, 200, index === 0 ? [workspace] : { data: [workspace, { id: "x" }], total: 2 }),
    );
    const upstream = clientFor(server.url);

    const bare = await upstream.listWorkspaces();
    const enveloped = await upstream.listWorkspaces();

    expect(bare.records.map((record) => record.value.id)).toEqual([7]);
    expect(enveloped.records.map((record) => record.value.id)).toEqual([7]);
    expect(enveloped.rejected.map((record) => record.stream)).toEqual(["workspaces"]);
  });

  it("accepts replies as the {data, total} envelope too, as workspaces", async () => {
    const reply = { id: 9, schedule_id: 3, body_plain_text: "hi", body_html: "<p>hi</p>", received_on: "2026-01-01T00:00:00Z", mail_from: "a@b.test", subject: "Re", reply_classification: "positive" };
    const server = await local.serve((_request, response, index) => sendJson(response, 200, index === 0 ? [reply] : { data: [reply], total: 1 }));
    const upstream = clientFor(server.url);
    expect((await upstream.listReplies("c1")).records.map((record) => record.value.id)).toEqual([9]);
    expect((await upstream.listReplies("c1")).records.map((record) => record.value.id)).toEqual([9]);
  });

  it("retries an envelope that is not {data, total}, and a 200 whose body is not JSON", async () => {
    const answers = [
      (response: Parameters<typeof sendJson>[0]) => sendJson(response, 200, { items: [] }),
      (response: Parameters<typeof sendJson>[0]) => sendJson(response, 200, { data: "nope", total: 1 }),
      (response: Parameters<typeof sendJson>[0]) => {
        response.writeHead(200, { "content-type": "text/html" });
        response.end("<html><body>Maintenance</body></html>");
      },
      (response: Parameters<typeof sendJson>[0]) => sendJson(response, 200, { data: [campaignItem("c1")], total: 1 }),
    ];
    const server = await local.serve((_request, response, index) => answers[index]?.(response));
    const upstream = clientFor(server.url);

    const page = await upstream.page("campaigns", { offset: 0 });

    expect(page.records.map((record) => record.value.uid)).toEqual(["c1"]);
    expect(upstream.stats).toMatchObject({ requests: 4, retries: 3 });
  });

  it("retries a 200 whose body is cut off mid-stream", async () => {
    const full = JSON.stringify({ data: [campaignItem("c1")], total: 1 });
    const server = await local.serve((_request, response, index) => {
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(full) });
      if (index > 0) return void response.end(full);
      response.write(full.slice(0, 20));
      setTimeout(() => response.socket?.destroy(), 20);
    });
    const upstream = clientFor(server.url);

    const page = await upstream.page("campaigns", { offset: 0 });

    expect(page.records).toHaveLength(1);
    expect(upstream.stats).toMatchObject({ requests: 2, retries: 1 });
  });

  it("reads an HTML error page as a short excerpt and retries a 5xx until it gives up", async () => {
    const page = `<html><head><title>502</title><style>body{}</style></head><body><h1>Bad Gateway</h1>${"<p>x</p>".repeat(200)}</body></html>`;
    const server = await local.serve((_request, response) => {
      response.writeHead(502, { "content-type": "text/html" });
      response.end(page);
    });
    const upstream = local.connect({ baseUrl: server.url, apiKey: KEY, requestsPerSecond: 1000, maxRetries: 2, retryBaseMs: 1, retryCapMs: 5 });

    const error = await rejectionOf(upstream.getLead("l1"));

    expect(error).toBeInstanceOf(UpstreamError);
    const failure = error as UpstreamError;
    expect(failure).toMatchObject({ status: 502, retryable: true, attempts: 3, endpoint: PATHS.lead });
    expect(failure.upstreamMessage).toMatch(/^502 Bad Gateway x x/);
    expect(failure.upstreamMessage?.length).toBeLessThanOrEqual(201);
    expect(failure.upstreamMessage).not.toContain("<");
    expect(upstream.stats).toMatchObject({ requests: 3, retries: 2 });
  });

  it("walks pages until a page falls short of the limit at the total, one page per request", async () => {
    const all = Array.from({ length: 5 }, (_, index) => campaignItem(`c${index}`));
    const server = await local.serve((request, response) => {
      const query = new URL(request.url ?? "/", "http://x").searchParams;
      const offset = Number(query.get("offset"));
      const limit = Number(query.get("limit"));
      sendJson(response, 200, { data: all.slice(offset, offset + limit), total: all.length });
    });
    const client = local.connect({ baseUrl: server.url, apiKey: KEY, requestsPerSecond: 1000, pageSize: 2 });

    const seen: string[] = [];
    for await (const page of client.pages("campaigns", { workspaceId: 3, startOffset: 1 })) seen.push(...page.records.map((record) => record.value.uid));

    expect(seen).toEqual(["c1", "c2", "c3", "c4"]);
    // The last page was full, so only the empty one after it shows the listing ended.
    expect(server.requests).toEqual([
      `GET ${PATHS.campaigns}?workspace_id=3&limit=2&offset=1`,
      `GET ${PATHS.campaigns}?workspace_id=3&limit=2&offset=3`,
      `GET ${PATHS.campaigns}?workspace_id=3&limit=2&offset=5`,
    ]);
  });

  it("yields the empty page that ends a walk, whose total shows a record deleted after the last full page", async () => {
    const all = Array.from({ length: 4 }, (_, index) => campaignItem(`c${index}`));
    const server = await local.serve((request, response) => {
      const offset = Number(new URL(request.url ?? "/", "http://x").searchParams.get("offset"));
      // Just before the page past the end is served, a record already read is deleted.
      if (offset === 4) all.splice(1, 1);
      sendJson(response, 200, { data: all.slice(offset, offset + 2), total: all.length });
    });
    const client = local.connect({ baseUrl: server.url, apiKey: KEY, requestsPerSecond: 1000, pageSize: 2 });

    const pages: { uids: string[]; total: number | null }[] = [];
    for await (const page of client.pages("campaigns", {})) pages.push({ uids: page.records.map((record) => record.value.uid), total: page.total });

    expect(pages).toEqual([
      { uids: ["c0", "c1"], total: 4 },
      { uids: ["c2", "c3"], total: 4 },
      { uids: [], total: 3 },
    ]);
  });
});
