import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runFullSync, type RunSummary } from "../../src/sync/runs.ts";
import type { UpstreamClient } from "../../src/upstream/client.ts";
import { PATHS } from "../../src/upstream/endpoints.ts";
import { useTestDatabase } from "../support/database.ts";
import { openDeviatingFixture, type DeviatingFixture } from "../support/sync.ts";

/**
 * Records that cannot be placed and look alike: every one of them is kept,
 * none stops the walk it came in, and a contact (which arrives only inside
 * its lead) whose id cannot be read is kept too instead of vanishing.
 */

const databaseUrl = useTestDatabase("unplaceable");

type Json = Record<string, unknown>;

let fixture: DeviatingFixture;
let run: RunSummary;
/** A campaign with at least three open events: its first two lose their opened_on and come to name the same schedule. */
let opensCampaign: string;
let contactLead: { uid: string; campaign: string; contact: Json };

async function chooseVictims(client: UpstreamClient): Promise<void> {
  for await (const page of client.pages("campaigns", {})) {
    for (const { value } of page.records) {
      const uid = (value as { uid: string }).uid;
      if (!opensCampaign) {
        const opens = await client.page("email_opens", { campaignUid: uid, offset: 0 });
        if ((opens.total ?? 0) >= 3) opensCampaign = uid;
      }
      if (!contactLead) {
        const leads = await client.page("leads", { campaignUid: uid, offset: 0 });
        const lead = leads.records[0]?.value as { uid: string; contact: Json } | undefined;
        if (lead) contactLead = { uid: lead.uid, campaign: uid, contact: lead.contact };
      }
    }
  }
  if (!opensCampaign || !contactLead) throw new Error("the seed has no campaign with three open events, or no lead");
}

function deviate(path: string, query: URLSearchParams, body: unknown): unknown {
  if (path === PATHS.emailOpenEvents && query.get("campaign_uid") === opensCampaign) {
    const offset = Number(query.get("offset") ?? 0);
    const records = (body as { data: Json[] }).data;
    const first = records[0 - offset];
    for (const position of [0, 1]) {
      const record = records[position - offset];
      if (record) Object.assign(record, { opened_on: null, schedule_id: first?.schedule_id ?? record.schedule_id });
    }
  }
  if (path === PATHS.leads || path === PATHS.lead) {
    const records = (Array.isArray((body as Json).data) ? (body as { data: Json[] }).data : [body]) as Json[];
    for (const record of records) if (record.uid === contactLead.uid) (record.contact as Json).id = null;
  }
  return body;
}

beforeAll(async () => {
  fixture = await openDeviatingFixture(databaseUrl(), "unplaceable", deviate);
  await chooseVictims(fixture.client);
  run = await runFullSync(fixture.context({ client: fixture.deviating }));
});
afterAll(async () => {
  await fixture?.close();
});

describe("records that cannot be placed", () => {
  it("end the run partial, not failed: two identical open events without opened_on still let the walk prove it saw every record", () => {
    expect(run.failures).toEqual([]);
    expect(run.outcome).toBe("partial");
    expect(run.rejected).toBeGreaterThanOrEqual(3);
  });

  it("keep the open events, naming the key field each lost", async () => {
    const rows = await fixture.warehouse.db
      .selectFrom("rejected_records")
      .select(["stream", "reason", "payload", "record_key", "times_seen"])
      .where("stream", "=", "email_opens")
      .where("campaign_uid", "=", opensCampaign)
      .execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]?.reason).toMatch(/^opened_on: .*a key field/);
    expect(rows[0]?.record_key).toMatch(/^schedule_id=\d+$/);
    expect(rows[0]?.times_seen).toBeGreaterThanOrEqual(2);
  });

  it("keep a contact whose id cannot be read, under its lead, and still land the lead", async () => {
    const db = fixture.warehouse.db;
    const rows = await db.selectFrom("rejected_records").select(["stream", "reason", "payload", "parent_key"]).where("parent_key", "=", contactLead.uid).execute();
    expect(rows).toEqual([{ stream: "leads", reason: expect.stringMatching(/^contact\.id: /), payload: { ...contactLead.contact, id: null }, parent_key: contactLead.uid }]);
    const lead = await db.selectFrom("leads").select(["uid", "contact_id", "_field_issues"]).where("uid", "=", contactLead.uid).executeTakeFirstOrThrow();
    expect(lead.contact_id).toBeNull();
    expect(JSON.stringify(lead._field_issues)).toContain("contact");
  });
});
