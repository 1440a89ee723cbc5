import { describe, expect, it } from "vitest";
import { currentRejected } from "../../src/sync/counts.ts";
import { runCampaignSync, runFullSync } from "../../src/sync/runs.ts";
import type { Lead } from "../../src/upstream/resources.ts";
import { buildLead, buildSequence } from "../support/scripted-upstream.ts";
import { CAMPAIGN, leadsOf, liveLeads, useEngineHarness, useSmallPages, type Harness } from "./engine-harness.ts";

/** Scripted scenarios (engine-harness.ts) of records that cannot be placed: what is kept, what is set aside, and how it is counted. */

const harness = useEngineHarness("engine_rejected");

const smallPages = useSmallPages();

describe("3. records that are present whatever else is wrong with them", () => {
  it("soft-deletes nothing from a walk that met a lead it could not place", async () => {
    const h = await harness(20);
    await runCampaignSync(h.context(), CAMPAIGN);
    h.upstream.hook = ({ path }) => {
      if (path !== "/api/v1/leads/") return undefined;
      const [broken, ...rest] = leadsOf(h).map((lead) => ({ ...lead }));
      delete (broken as Partial<Lead>).uid;
      return { status: 200, body: { data: [broken, ...rest], total: 20 } };
    };
    const summary = await runCampaignSync(h.context(), CAMPAIGN);
    expect(summary.outcome).toBe("partial");
    expect(await liveLeads(h)).toHaveLength(20);
    const schedules = await h.warehouse.db.selectFrom("schedules").select("id").where("_deleted_at", "is", null).execute();
    expect(schedules).toHaveLength(20);
  });

  it("walks the leads and reads the events of a campaign whose detail cannot be placed", async () => {
    const h = await harness(3);
    h.upstream.hook = ({ path }) => {
      if (path !== "/api/v1/campaign/") return undefined;
      const { uid: _unplaceable, ...detail } = h.upstream.state.campaigns[0] as (typeof h.upstream.state.campaigns)[number];
      return { status: 200, body: detail };
    };
    h.requested();
    const summary = await runFullSync(h.context());
    expect(summary.outcome).toBe("partial");
    expect(await liveLeads(h)).toEqual(["L1", "L2", "L3"]);
    expect(await currentRejected(h.warehouse.db, "acme", "campaign_detail", CAMPAIGN)).toBe(1);
    expect(h.requested()).toEqual(expect.arrayContaining(["/api/v1/replies/", "/api/v1/campaign/email-open-events/"]));
  });

  it("keeps the schedules of a lead whose list of schedules could not be read", async () => {
    const h = await harness(20);
    await runCampaignSync(h.context(), CAMPAIGN);
    h.upstream.hook = ({ path }) =>
      path === "/api/v1/leads/" ? { status: 200, body: { data: leadsOf(h).map((lead, index) => (index === 0 ? { ...lead, schedules: "n/a" } : lead)), total: 20 } } : undefined;
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    expect(await h.warehouse.db.selectFrom("schedules").select("_deleted_at").where("id", "=", 1001).executeTakeFirstOrThrow()).toEqual({ _deleted_at: null });
  });

  it("keeps the readable sending domains of a campaign whose list holds one it cannot read, and soft-deletes none it no longer lists until the list reads whole", async () => {
    const h = await harness(1);
    const settings = h.upstream.state.campaigns[0]!.settings as { sending_domains: unknown[] };
    const domains = async () => {
      const rows = await h.warehouse.db.selectFrom("campaign_sending_domains").select(["domain_id", "_deleted_at"]).where("campaign_uid", "=", CAMPAIGN).orderBy("domain_id").execute();
      return rows.map((row) => [Number(row.domain_id), row._deleted_at === null ? "live" : "deleted"]);
    };
    settings.sending_domains = [1, 2, 3];
    await runCampaignSync(h.context(), CAMPAIGN);
    // Domain 4 is new; 2 and 3 are no longer listed, and the entry that cannot be read may be either.
    settings.sending_domains = [1, 4, null];
    const summary = await runCampaignSync(h.context(), CAMPAIGN);
    expect(summary.outcome).toBe("succeeded");
    expect(summary.fieldIssues).toMatchObject({ "campaigns.settings.sending_domains.*": 1 });
    expect(await domains()).toEqual([
      [1, "live"],
      [2, "live"],
      [3, "live"],
      [4, "live"],
    ]);
    settings.sending_domains = [1, 4];
    await runCampaignSync(h.context(), CAMPAIGN);
    expect(await domains()).toEqual([
      [1, "live"],
      [2, "deleted"],
      [3, "deleted"],
      [4, "live"],
    ]);
  });

  it("keeps a reply that lost its schedule_id by its id, and still soft-deletes the replies that are gone", async () => {
    const h = await harness(2);
    const replyTo = (id: number, scheduleId: number) => ({
      id,
      schedule_id: scheduleId,
      body_plain_text: "Yes",
      body_html: "<p>Yes</p>",
      received_on: "2026-05-01T12:00:00.000Z",
      reply_classification: "positive" as const,
      mail_from: "l@example.com",
      subject: "Re: Step 1",
    });
    h.upstream.state.replies.set(CAMPAIGN, [replyTo(77, 1001), replyTo(78, 1002)]);
    await runCampaignSync(h.context(), CAMPAIGN);
    // Reply 77 comes without its schedule_id (it cannot be placed, but its id says which row it is); 78 is gone.
    h.upstream.state.replies.set(CAMPAIGN, [{ ...replyTo(77, 1001), schedule_id: null as unknown as number }]);
    await runCampaignSync(h.context(), CAMPAIGN);
    await runCampaignSync(h.context(), CAMPAIGN);
    const rows = await h.warehouse.db.selectFrom("replies").select(["id", "_deleted_at"]).orderBy("id").execute();
    expect(rows.map((row) => [Number(row.id), row._deleted_at === null ? "live" : "deleted"])).toEqual([
      [77, "live"],
      [78, "deleted"],
    ]);
    expect(await currentRejected(h.warehouse.db, "acme", "replies", CAMPAIGN)).toBe(1);
  });

  it("soft-deletes a reply only when two reply listings in a row leave it out, and a schedule's copy does not bring it back", async () => {
    const h = await harness(3);
    const reply = { id: 77, body_plain_text: "Yes", body_html: "<p>Yes</p>", received_on: "2026-05-01T12:00:00.000Z", reply_classification: "positive" as const };
    (leadsOf(h)[0]?.schedules[0] as { replies: unknown[] }).replies.push(reply);
    h.upstream.state.replies.set(CAMPAIGN, [{ ...reply, schedule_id: 1001, mail_from: "l1@example.com", subject: "Re: Step 1" }]);
    await runCampaignSync(h.context(), CAMPAIGN);
    const deletedAt = async () => (await h.warehouse.db.selectFrom("replies").select("_deleted_at").where("id", "=", 77).executeTakeFirstOrThrow())._deleted_at;

    h.upstream.hook = ({ path }) => (path === "/api/v1/replies/" ? { status: 200, body: [] } : undefined);
    await runCampaignSync(h.context(), CAMPAIGN);
    expect(await deletedAt()).toBeNull();
    await runCampaignSync(h.context(), CAMPAIGN);
    expect(await deletedAt()).toBeInstanceOf(Date);
    await runCampaignSync(h.context(), CAMPAIGN);
    expect(await deletedAt()).toBeInstanceOf(Date);
    h.upstream.hook = undefined;
    await runCampaignSync(h.context(), CAMPAIGN);
    expect(await deletedAt()).toBeNull();
  });
});

describe("4. rejected records", () => {
  it("count as rejected now only while they are still met", async () => {
    const h = await harness(5);
    let version = 0;
    h.upstream.hook = ({ path }) => {
      if (path !== "/api/v1/leads/") return undefined;
      const [broken, ...rest] = leadsOf(h).map((lead) => ({ ...lead }));
      delete (broken as Partial<Lead>).uid;
      (broken as Lead).sender_name = `changed ${version++}`;
      return { status: 200, body: { data: [broken, ...rest], total: 5 } };
    };
    await runCampaignSync(h.context(), CAMPAIGN);
    await runCampaignSync(h.context(), CAMPAIGN);
    expect(await currentRejected(h.warehouse.db, "acme", "leads", CAMPAIGN)).toBe(1);
    h.upstream.hook = undefined;
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    expect(await currentRejected(h.warehouse.db, "acme", "leads", CAMPAIGN)).toBe(0);
  });

  /** A harness whose sequence 1 #9 answers without its id: it cannot be placed, and the run is partial. */
  async function unplaceableSequence(): Promise<Harness> {
    const h = await harness(2);
    const { id: _id, ...withoutId } = buildSequence(1);
    h.upstream.state.sequences.set(1, withoutId as never);
    expect((await runFullSync(h.context())).outcome).toBe("partial");
    expect(await h.warehouse.db.selectFrom("rejected_records").select(["stream", "record_key", "resolved_at"]).execute()).toEqual([
      { stream: "email_sequences", record_key: "requested=1", resolved_at: null },
    ]);
    return h;
  }
  const sequenceRejected = async (h: Harness) => currentRejected(h.warehouse.db, "acme", "email_sequences", CAMPAIGN);

  it("resolve an email sequence's answer once the sequence is gone upstream and nothing asks for it again", async () => {
    const h = await unplaceableSequence();
    // Sequence 1 is deleted upstream: the campaign's schedules are regenerated to send sequence 2.
    h.upstream.state.sequences.delete(1);
    h.upstream.state.sequences.set(2, buildSequence(2));
    h.upstream.state.leads.set(CAMPAIGN, [buildLead("L1", 2001, 2), buildLead("L2", 2002, 2)]);
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    expect(await sequenceRejected(h)).toBe(0);
  });

  it("resolve an email sequence's answer once #9 no longer knows the sequence", async () => {
    const h = await unplaceableSequence();
    // The schedules still send sequence 1, so it is asked for again: #9 answers 404.
    h.upstream.state.sequences.delete(1);
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    expect(await sequenceRejected(h)).toBe(0);
  });
});

describe("4b. a record at a page boundary", () => {
  it("is counted once, though the next page, asked one record early, starts with it: rejected, what it held, its parts and its field issues", async () => {
    const h = await harness(5);
    // Pages of 2: L2 ends the first page and anchors the second, L3 ends the second and anchors the third.
    const [, second, third] = leadsOf(h) as [Lead, Lead, Lead];
    delete (second as Partial<Lead>).uid;
    (third.contact as { id: number | null }).id = null;
    (third.schedules[0] as { status: unknown }).status = 12345;
    const summary = await runFullSync(h.context({ client: smallPages(h, 2) }));
    const db = h.warehouse.db;
    const rows = await db.selectFrom("rejected_records").select(["record_key", "parent_key", "times_seen"]).orderBy("parent_key").execute();
    const run = await db.selectFrom("sync_runs").select(["rejected", "skipped", "counts", "field_issues"]).where("id", "=", summary.runId).executeTakeFirstOrThrow();
    // L2 could not be placed, with its contact and schedule; L3's contact could not be placed either. The run met each once.
    expect(rows).toEqual([
      { record_key: null, parent_key: "L3", times_seen: 1 },
      { record_key: null, parent_key: null, times_seen: 1 },
    ]);
    expect({ outcome: summary.outcome, rejected: run.rejected, skipped: run.skipped, leads: (run.counts as Record<string, unknown>).leads }).toEqual({
      outcome: "partial",
      rejected: 2,
      skipped: 2,
      leads: expect.objectContaining({ fetched: 5, rejected: 2, skipped: 2 }),
    });
    expect(run.field_issues).toEqual({ "leads.contact.id": 1, "schedules.status": 1 });
  });
});

type Json = Record<string, unknown>;

/** Inserts `lead` at `index` of the campaign's listing once the first leads page has been answered. */
function insertAfterFirstPage(h: Harness, index: number, lead: unknown): void {
  let inserted = false;
  h.upstream.hook = ({ path, query }) => {
    if (path === "/api/v1/leads/" && Number(query.get("offset")) > 0 && !inserted) {
      inserted = true;
      leadsOf(h).splice(index, 0, lead as Lead);
    }
    return undefined;
  };
}

describe("5. records that arrive before the anchor of the next page", () => {
  // Between two records the walk read: no earlier page brought them, so they are set aside and counted like any other.
  it("a lead that cannot be placed, arriving between two pages just before the anchor, is set aside and the run is partial", async () => {
    const h = await harness(4);
    const client = smallPages(h, 3);
    // Page 1 (offset 0): L1 L2 L3. Then a lead without a uid arrives between L2 and L3: page 2 (offset 2) is [X, L3, L4].
    const broken = buildLead("LX", 1099) as unknown as Json;
    delete broken.uid;
    insertAfterFirstPage(h, 2, broken);

    const summary = await runCampaignSync(h.context({ client }), CAMPAIGN);

    const rejected = await h.warehouse.db.selectFrom("rejected_records").select(["stream", "reason"]).execute();
    expect({ outcome: summary.outcome, rejected: rejected.length }).toEqual({ outcome: "partial", rejected: 1 });
  });

  it("a new lead whose schedule has no id, arriving just before the anchor, has that schedule set aside and the run is partial", async () => {
    const h = await harness(4);
    const client = smallPages(h, 3);
    const fresh = buildLead("LN", 1099) as unknown as Json;
    delete ((fresh.schedules as Json[])[0] as Json).id;
    insertAfterFirstPage(h, 2, fresh);

    const summary = await runCampaignSync(h.context({ client }), CAMPAIGN);

    const leads = await h.warehouse.db.selectFrom("leads").select("uid").orderBy("uid").execute();
    const rejected = await h.warehouse.db.selectFrom("rejected_records").select(["stream", "reason", "parent_key"]).execute();
    expect(leads.map((row) => row.uid)).toContain("LN");
    expect({ outcome: summary.outcome, rejected: rejected.length }).toEqual({ outcome: "partial", rejected: 1 });
  });
});
