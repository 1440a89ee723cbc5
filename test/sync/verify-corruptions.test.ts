import { sql } from "kysely";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runFullSync } from "../../src/sync/runs.ts";
import { verify, type VerifyLine, type VerifyOptions } from "../../src/sync/verify.ts";
import { useTestDatabase } from "../support/database.ts";
import { openSyncFixture, type SyncFixture } from "../support/sync.ts";

/**
 * A clean sync of the small seed, then one corruption of the warehouse per test (undone after it, from a
 * snapshot taken after the sync): verify must name it, in the mode the README says compares it.
 */

const databaseUrl = useTestDatabase("verify_corruptions");
const SCHEMA = "verify_corruptions";
const TABLES = ["workspaces", "domains", "contact_lists", "campaigns", "campaign_sending_domains", "email_sequences", "leads", "contacts", "schedules", "replies", "link_clicks", "email_opens", "campaign_history", "workspace_history", "domain_history"];

let fixture: SyncFixture;
let busy: string;
let other: string;
let withDomains: string;

const notOk = (lines: VerifyLine[]) => lines.filter((line) => line.status !== "ok");
const q = (text: string) => sql.raw(text).execute(fixture.warehouse.db);
const one = async <T,>(text: string): Promise<T> => (await sql.raw<T>(text).execute(fixture.warehouse.db)).rows[0] as T;
const run = (options: VerifyOptions = {}) => verify(fixture.context(), options);
const describeLines = (lines: VerifyLine[]) => notOk(lines).map((line) => `${line.campaignUid ?? "-"} ${line.stream}${line.table ? ` → ${line.table}` : ""} ${line.status}`);

async function campaignTotals(campaignUid: string) {
  const client = fixture.client;
  const total = async (resource: "leads" | "link_clicks" | "email_opens") => (await client.page(resource, { campaignUid, offset: 0, limit: 1 })).total ?? 0;
  return { leads: await total("leads"), clicks: await total("link_clicks"), opens: await total("email_opens"), replies: (await client.listReplies(campaignUid)).records.length };
}

beforeAll(async () => {
  fixture = await openSyncFixture(databaseUrl(), SCHEMA);
  expect((await runFullSync(fixture.context())).outcome).toBe("succeeded");
  const running: string[] = [];
  for await (const page of fixture.client.pages("campaigns", {})) for (const { value } of page.records) if (value.status === "running") running.push(value.uid);
  for (const uid of running) {
    const totals = await campaignTotals(uid);
    if (totals.leads > 0 && totals.opens > 0 && totals.replies > 0 && totals.clicks > 0) {
      busy = uid;
      break;
    }
  }
  other = running.find((uid) => uid !== busy) as string;
  expect(busy).toBeDefined();
  expect(other).toBeDefined();
  withDomains = (await one<{ uid: string }>(`SELECT d.campaign_uid AS uid FROM campaign_sending_domains d JOIN campaigns c ON c.uid = d.campaign_uid WHERE d._deleted_at IS NULL AND c._deleted_at IS NULL LIMIT 1`)).uid;
  for (const table of TABLES) await q(`CREATE TABLE bk_${table} AS SELECT * FROM ${table}`);
  expect(notOk((await run({ deep: "all", values: true })).lines)).toEqual([]);
}, 60_000);

afterEach(async () => {
  // Put the synced state back, triggers off (history, contacts following leads).
  await fixture.warehouse.db.transaction().execute(async (trx) => {
    await sql`SET LOCAL session_replication_role = replica`.execute(trx);
    for (const table of TABLES) {
      await sql.raw(`DELETE FROM ${table}`).execute(trx);
      await sql.raw(`INSERT INTO ${table} OVERRIDING SYSTEM VALUE SELECT * FROM bk_${table}`).execute(trx);
    }
  });
});

afterAll(async () => {
  await fixture?.close();
});

/** Columns of a table, but its surrogate key. */
async function columnsOf(table: string): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    SELECT column_name AS name FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name = ${table} AND column_name NOT IN ('link_click_key', 'email_open_key')
     ORDER BY ordinal_position`.execute(fixture.warehouse.db);
  return rows.map((row) => row.name);
}

/** Inserts a copy of the row `where` selects, with `set` (column → SQL expression) in place of its values. */
async function cloneRow(table: string, where: string, set: Record<string, string>): Promise<void> {
  const columns = await columnsOf(table);
  const values = columns.map((column) => set[column] ?? `"${column}"`);
  await q(`INSERT INTO ${table} (${columns.map((c) => `"${c}"`).join(", ")}) SELECT ${values.join(", ")} FROM ${table} WHERE ${where} LIMIT 1`);
}

function expectLine(lines: VerifyLine[], match: Partial<VerifyLine>, label: string): void {
  expect(notOk(lines), `${label}: ${JSON.stringify(describeLines(lines))}`).toEqual(expect.arrayContaining([expect.objectContaining(match)]));
}

describe("verify names each corruption", () => {
  it("an extra live contact no lead names (contacts retire with their leads, migrations/0008)", async () => {
    await cloneRow("contacts", "_deleted_at IS NULL", { id: "987654321" });
    for (const options of [{}, { deep: "all" as const, values: true }]) {
      expect(notOk((await run(options)).lines).length, JSON.stringify(options)).toBeGreaterThan(0);
    }
  });

  it("an extra live email sequence under a live campaign (no schedule sends it, #9 does not know it)", async () => {
    await cloneRow("email_sequences", `campaign_uid = '${busy}' AND _deleted_at IS NULL`, { id: "987654323" });
    expectLine((await run({ deep: "all" })).lines, { campaignUid: busy, stream: "email_sequences", status: "extra" }, "deep=all");
  });

  it("an extra live schedule no listed lead lists (--deep=all)", async () => {
    await cloneRow("schedules", `campaign_uid = '${busy}' AND _deleted_at IS NULL`, { id: "987654325" });
    expectLine((await run({ deep: "all" })).lines, { campaignUid: busy, stream: "schedules", status: "extra" }, "extra schedule deep=all");
  });

  it("a schedule soft-deleted (--deep=all)", async () => {
    await q(`UPDATE schedules SET _deleted_at = now() WHERE id = (SELECT id FROM schedules WHERE campaign_uid = '${busy}' AND _deleted_at IS NULL ORDER BY id LIMIT 1)`);
    expectLine((await run({ deep: "all" })).lines, { campaignUid: busy, stream: "schedules", status: "missing" }, "deep=all");
  });


});

interface Case {
  name: string;
  apply: () => Promise<unknown>;
  options: VerifyOptions;
  expected: (busy: string, other: string) => Partial<VerifyLine>;
}

const firstLive = (table: string, key: string, extra = "") => `(SELECT ${key} FROM ${table} WHERE campaign_uid = '${busy}' AND _deleted_at IS NULL ${extra} ORDER BY ${key} LIMIT 1)`;
const DEEP_VALUES: VerifyOptions = { deep: "all", values: true };

const CASES: Case[] = [
  { name: "lead soft-deleted", apply: () => q(`UPDATE leads SET _deleted_at = now() WHERE uid = ${firstLive("leads", "uid")}`), options: {}, expected: (b) => ({ campaignUid: b, stream: "leads", status: "missing" }) },
  { name: "lead row removed", apply: () => q(`DELETE FROM leads WHERE uid = ${firstLive("leads", "uid")}`), options: {}, expected: (b) => ({ campaignUid: b, stream: "leads", status: "missing" }) },
  { name: "extra lead", apply: () => cloneRow("leads", `campaign_uid = '${busy}' AND _deleted_at IS NULL`, { uid: "'L_extra'" }), options: {}, expected: (b) => ({ campaignUid: b, stream: "leads", status: "extra" }) },
  { name: "lead moved to another campaign", apply: () => q(`UPDATE leads SET campaign_uid = '${other}' WHERE uid = ${firstLive("leads", "uid")}`), options: {}, expected: (_b, o) => ({ campaignUid: o, stream: "leads", status: "extra" }) },
  { name: "reply soft-deleted", apply: () => q(`UPDATE replies SET _deleted_at = now() WHERE id = ${firstLive("replies", "id")}`), options: {}, expected: (b) => ({ campaignUid: b, stream: "replies", status: "missing" }) },
  { name: "extra reply", apply: () => cloneRow("replies", `campaign_uid = '${busy}' AND _deleted_at IS NULL`, { id: "987654330" }), options: {}, expected: (b) => ({ campaignUid: b, stream: "replies", status: "extra" }) },
  { name: "reply moved to another campaign", apply: () => q(`UPDATE replies SET campaign_uid = '${other}' WHERE id = ${firstLive("replies", "id")}`), options: {}, expected: (b) => ({ campaignUid: b, stream: "replies", status: "missing" }) },
  { name: "click soft-deleted", apply: () => q(`UPDATE link_clicks SET _deleted_at = now() WHERE link_click_key = ${firstLive("link_clicks", "link_click_key")}`), options: {}, expected: (b) => ({ campaignUid: b, stream: "link_clicks", status: "missing" }) },
  { name: "extra click", apply: () => cloneRow("link_clicks", `campaign_uid = '${busy}' AND _deleted_at IS NULL`, { id: "NULL", link: "'https://invented.example/'" }), options: {}, expected: (b) => ({ campaignUid: b, stream: "link_clicks", status: "extra" }) },
  { name: "click's clicked_on shifted (key changed, count equal)", apply: () => q(`UPDATE link_clicks SET clicked_on = clicked_on + interval '1 second' WHERE link_click_key = ${firstLive("link_clicks", "link_click_key")}`), options: { deep: "all" }, expected: (b) => ({ campaignUid: b, stream: "link_clicks", status: "missing" }) },
  { name: "open soft-deleted", apply: () => q(`UPDATE email_opens SET _deleted_at = now() WHERE email_open_key = ${firstLive("email_opens", "email_open_key")}`), options: {}, expected: (b) => ({ campaignUid: b, stream: "email_opens", status: "missing" }) },
  { name: "extra open", apply: () => cloneRow("email_opens", `campaign_uid = '${busy}' AND _deleted_at IS NULL`, { opened_on: "opened_on + interval '3 seconds'" }), options: {}, expected: (b) => ({ campaignUid: b, stream: "email_opens", status: "extra" }) },
  { name: "open's schedule_id changed (count equal)", apply: () => q(`UPDATE email_opens SET schedule_id = 987654331 WHERE email_open_key = ${firstLive("email_opens", "email_open_key")}`), options: { deep: "all" }, expected: (b) => ({ campaignUid: b, stream: "email_opens", status: "missing" }) },
  { name: "schedule moved to another lead", apply: () => q(`UPDATE schedules SET lead_uid = 'L_elsewhere' WHERE id = ${firstLive("schedules", "id")}`), options: DEEP_VALUES, expected: (b) => ({ campaignUid: b, stream: "leads", table: "schedules", status: "differs" }) },
  { name: "schedule moved to another campaign", apply: () => q(`UPDATE schedules SET campaign_uid = '${other}' WHERE id = ${firstLive("schedules", "id")}`), options: { deep: "all" }, expected: (b) => ({ campaignUid: b, stream: "schedules", status: "missing" }) },
  { name: "schedule's email_open_count changed", apply: () => q(`UPDATE schedules SET email_open_count = email_open_count + 5 WHERE id = ${firstLive("schedules", "id")}`), options: DEEP_VALUES, expected: (b) => ({ campaignUid: b, stream: "leads", table: "schedules", status: "differs" }) },
  { name: "schedule's status changed", apply: () => q(`UPDATE schedules SET status = 'invented' WHERE id = ${firstLive("schedules", "id")}`), options: DEEP_VALUES, expected: (b) => ({ campaignUid: b, stream: "leads", table: "schedules", status: "differs" }) },
  { name: "schedule's email_sequence_id changed", apply: () => q(`UPDATE schedules SET email_sequence_id = 987654332 WHERE id = ${firstLive("schedules", "id")}`), options: DEEP_VALUES, expected: (b) => ({ campaignUid: b, stream: "leads", table: "schedules", status: "differs" }) },
  { name: "lead's contact_id changed", apply: () => q(`UPDATE leads SET contact_id = 987654333 WHERE uid = ${firstLive("leads", "uid")}`), options: DEEP_VALUES, expected: (b) => ({ campaignUid: b, stream: "leads", table: "leads", status: "differs" }) },
  { name: "contact's unsubscribed flipped", apply: () => q(`UPDATE contacts SET unsubscribed = NOT unsubscribed WHERE id = (SELECT contact_id FROM leads WHERE campaign_uid = '${busy}' AND _deleted_at IS NULL ORDER BY uid LIMIT 1)`), options: DEEP_VALUES, expected: (b) => ({ campaignUid: b, stream: "leads", table: "contacts", status: "differs" }) },
  { name: "a live lead's contact row removed (no option: it holds none)", apply: () => q(`DELETE FROM contacts WHERE id = (SELECT contact_id FROM leads WHERE campaign_uid = '${busy}' AND _deleted_at IS NULL ORDER BY uid LIMIT 1)`), options: {}, expected: () => ({ campaignUid: null, stream: "contacts", status: "missing" }) },
  { name: "contact soft-deleted", apply: () => q(`UPDATE contacts SET _deleted_at = now() WHERE id = (SELECT contact_id FROM leads WHERE campaign_uid = '${busy}' AND _deleted_at IS NULL ORDER BY uid LIMIT 1)`), options: DEEP_VALUES, expected: (b) => ({ campaignUid: b, stream: "leads", table: "contacts", status: "missing" }) },
  { name: "email sequence's subject changed", apply: () => q(`UPDATE email_sequences SET subject = 'Invented' WHERE id = (SELECT email_sequence_id FROM schedules WHERE campaign_uid = '${busy}' AND _deleted_at IS NULL ORDER BY id LIMIT 1)`), options: DEEP_VALUES, expected: (b) => ({ campaignUid: b, stream: "leads", table: "email_sequences", status: "differs" }) },
  { name: "email sequence soft-deleted", apply: () => q(`UPDATE email_sequences SET _deleted_at = now() WHERE id = (SELECT email_sequence_id FROM schedules WHERE campaign_uid = '${busy}' AND _deleted_at IS NULL ORDER BY id LIMIT 1)`), options: DEEP_VALUES, expected: (b) => ({ campaignUid: b, stream: "leads", table: "email_sequences", status: "missing" }) },
  { name: "email sequence moved to another campaign", apply: () => q(`UPDATE email_sequences SET campaign_uid = '${other}' WHERE id = (SELECT email_sequence_id FROM schedules WHERE campaign_uid = '${busy}' AND _deleted_at IS NULL ORDER BY id LIMIT 1)`), options: DEEP_VALUES, expected: (b) => ({ campaignUid: b, stream: "leads", table: "email_sequences", status: "differs" }) },
  { name: "reply's classification changed", apply: () => q(`UPDATE replies SET reply_classification = CASE WHEN reply_classification = 'positive' THEN 'negative' ELSE 'positive' END WHERE id = ${firstLive("replies", "id")}`), options: { values: true }, expected: (b) => ({ campaignUid: b, stream: "replies", table: "replies", status: "differs" }) },
  { name: "reply's lead_uid changed", apply: () => q(`UPDATE replies SET lead_uid = 'L_elsewhere' WHERE id = ${firstLive("replies", "id", "AND lead_uid IS NOT NULL")}`), options: DEEP_VALUES, expected: (b) => ({ campaignUid: b, table: "replies", status: "differs" }) },
  { name: "reply's schedule_id changed", apply: () => q(`UPDATE replies SET schedule_id = 987654334 WHERE id = ${firstLive("replies", "id")}`), options: { values: true }, expected: (b) => ({ campaignUid: b, stream: "replies", table: "replies", status: "differs" }) },
  { name: "click's id changed", apply: () => q(`UPDATE link_clicks SET id = 987654335 WHERE link_click_key = ${firstLive("link_clicks", "link_click_key", "AND id IS NOT NULL")}`), options: DEEP_VALUES, expected: (b) => ({ campaignUid: b, table: "link_clicks", status: "differs" }) },
  { name: "campaign status changed", apply: () => q(`UPDATE campaigns SET status = 'paused' WHERE uid = '${busy}'`), options: { values: true }, expected: (b) => ({ campaignUid: b, stream: "campaign_detail", table: "campaigns", status: "differs" }) },
  { name: "campaign daily limit changed", apply: () => q(`UPDATE campaigns SET daily_email_limit = 12345 WHERE uid = '${busy}'`), options: { values: true }, expected: (b) => ({ campaignUid: b, stream: "campaign_detail", table: "campaigns", status: "differs" }) },
  { name: "campaign soft-deleted", apply: () => q(`UPDATE campaigns SET _deleted_at = now() WHERE uid = '${busy}'`), options: {}, expected: () => ({ campaignUid: null, stream: "campaigns", status: "missing" }) },
  { name: "campaign soft-deleted (--campaign)", apply: () => q(`UPDATE campaigns SET _deleted_at = now() WHERE uid = '${busy}'`), options: {}, expected: (b) => ({ campaignUid: b, stream: "campaigns", status: "missing" }) },
  { name: "sending domain soft-deleted", apply: () => q(`UPDATE campaign_sending_domains SET _deleted_at = now() WHERE campaign_uid = '${withDomains}'`), options: { values: true }, expected: () => ({ stream: "campaign_detail", table: "campaign_sending_domains", status: "missing", campaignUid: withDomains }) },
  { name: "extra sending domain", apply: () => cloneRow("campaign_sending_domains", `campaign_uid = '${withDomains}'`, { domain_id: "987654336" }), options: { values: true }, expected: () => ({ stream: "campaign_detail", table: "campaign_sending_domains", status: "extra", campaignUid: withDomains }) },
  { name: "workspace credits changed", apply: () => q(`UPDATE workspaces SET credits_remaining = credits_remaining + 7`), options: { values: true }, expected: () => ({ campaignUid: null, stream: "workspaces", table: "workspaces", status: "differs" }) },
  { name: "domain status changed", apply: () => q(`UPDATE domains SET status = 'invented' WHERE id = (SELECT min(id) FROM domains WHERE _deleted_at IS NULL)`), options: { values: true }, expected: () => ({ campaignUid: null, stream: "domains", table: "domains", status: "differs" }) },
  { name: "contact list soft-deleted", apply: () => q(`UPDATE contact_lists SET _deleted_at = now() WHERE uid = (SELECT min(uid) FROM contact_lists WHERE _deleted_at IS NULL)`), options: {}, expected: () => ({ campaignUid: null, stream: "contact_lists", status: "missing" }) },
  { name: "extra domain", apply: () => cloneRow("domains", "_deleted_at IS NULL", { id: "987654337" }), options: {}, expected: () => ({ campaignUid: null, stream: "domains", status: "extra" }) },
  { name: "lead's sender_name changed", apply: () => q(`UPDATE leads SET sender_name = 'Invented' WHERE uid = ${firstLive("leads", "uid")}`), options: DEEP_VALUES, expected: (b) => ({ campaignUid: b, stream: "leads", table: "leads", status: "differs" }) },
];

describe("verify names each corruption (table)", () => {
  for (const c of CASES) {
    it(c.name, async () => {
      await c.apply();
      const options = c.name.endsWith("(--campaign)") ? { ...c.options, campaignUid: busy } : c.options;
      expectLine((await run(options)).lines, c.expected(busy, other), c.name);
    });
  }
});

describe("a campaign held deleted that the upstream still lists", () => {
  it("names the campaign missing, and nothing of its children extra: the upstream lists them all", async () => {
    await q(`UPDATE campaigns SET _deleted_at = now() WHERE uid = '${busy}'`);
    const result = await run();
    expect(describeLines(result.lines)).toEqual([`- campaigns missing`]);
  });
});

describe("a history that disagrees with its row (no request needed)", () => {
  it("names the campaign whose open history row holds another status", async () => {
    await q(`UPDATE campaign_history SET status = 'invented' WHERE campaign_uid = '${busy}' AND valid_to IS NULL`);
    for (const campaignUid of [undefined, busy]) {
      expectLine((await run({ campaignUid })).lines, { stream: "campaigns", table: "campaign_history", status: "differs", differingKeys: { count: 1, first: [busy] }, columns: { status: 1 } }, String(campaignUid));
    }
  });

  it("names the campaign whose open history row lost a setting, or all of them", async () => {
    for (const settings of ["settings - 'daily_email_limit'", "'{}'::jsonb"]) {
      await q(`UPDATE campaign_history SET settings = ${settings} WHERE campaign_uid = '${busy}' AND valid_to IS NULL`);
      for (const campaignUid of [undefined, busy]) {
        expectLine((await run({ campaignUid })).lines, { stream: "campaigns", table: "campaign_history", status: "differs", differingKeys: { count: 1, first: [busy] }, columns: { settings: 1 } }, `${settings} ${String(campaignUid)}`);
      }
    }
  });

  it("names the workspace without an open history row", async () => {
    const { id } = await one<{ id: string }>(`SELECT min(workspace_id)::text AS id FROM workspace_history WHERE valid_to IS NULL`);
    await q(`UPDATE workspace_history SET valid_to = now() WHERE workspace_id = ${id} AND valid_to IS NULL`);
    expectLine((await run()).lines, { stream: "workspaces", table: "workspace_history", status: "differs", differingKeys: { count: 1, first: [id] }, columns: { "open row": 1 } }, "workspace");
  });

  it("names the domain whose open history row holds other warm-up days", async () => {
    const { id } = await one<{ id: string }>(`SELECT min(domain_id)::text AS id FROM domain_history WHERE valid_to IS NULL`);
    await q(`UPDATE domain_history SET warmup_days_remaining = warmup_days_remaining + 3 WHERE domain_id = ${id} AND valid_to IS NULL`);
    expectLine((await run()).lines, { stream: "domains", table: "domain_history", status: "differs", columns: { warmup_days_remaining: 1 } }, "domain");
  });
});

describe("corruptions a count cannot see, where verify holds what it needs", () => {
  it("a reply swapped for an invented one: #13 is read whole, yet only its length is compared", async () => {
    await q(`UPDATE replies SET _deleted_at = now() WHERE id = ${firstLive("replies", "id")}`);
    await cloneRow("replies", `campaign_uid = '${busy}' AND _deleted_at IS NULL`, { id: "987654340" });
    expectLine((await run()).lines, { campaignUid: busy, stream: "replies" }, "shallow");
  });

});
