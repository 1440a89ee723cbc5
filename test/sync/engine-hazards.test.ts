import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { loadCheckpoint } from "../../src/sync/checkpoints.ts";
import { holdRequests } from "../support/scripted-upstream.ts";
import { runCampaignSync, runDiscovery, runFullSync } from "../../src/sync/runs.ts";
import { campaignLag, campaignStatus } from "../../src/sync/status.ts";
import type { Campaign, Lead } from "../../src/upstream/resources.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";

/** Where the warehouse could be wrong, or look fresher than it is, while the signals said all was well. */

const databaseUrl = useTestDatabase("engine_hazards");
const CAMPAIGN = "cmp_hazard";
const scripted = useScriptedCampaigns(databaseUrl, CAMPAIGN);

describe("a walk that never proves it saw every record", () => {
  it("does not count as a complete scan: the campaign's lag keeps growing while its walks fall short", async () => {
    const h = await scripted({ status: "running", leads: 20 });
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    const key = { account: "acme", campaignUid: CAMPAIGN, stream: "leads" };
    const proven = (await loadCheckpoint(h.warehouse.db, key)).lastCompleteScanAt;
    // From now on the upstream counts a lead it never lists.
    const leads = h.upstream.state.leads.get(CAMPAIGN) as Lead[];
    h.upstream.hook = ({ path, query }) => {
      if (path !== "/api/v1/leads/") return undefined;
      const offset = Number(query.get("offset"));
      return { status: 200, body: { data: leads.slice(offset, offset + Number(query.get("limit"))), total: leads.length + 1 } };
    };
    const summary = await runCampaignSync(h.context(), CAMPAIGN);
    expect(summary.outcome).toBe("partial");
    expect(summary.failures.map((failure) => failure.error.name)).toEqual(["IncompleteWalkError"]);
    expect((await loadCheckpoint(h.warehouse.db, key)).lastCompleteScanAt).toEqual(proven);
    const lag = (await campaignLag(h.warehouse.db, "acme", new Date(Date.now() + 3_600_000))).get(CAMPAIGN);
    expect(lag?.lagSeconds).toBeGreaterThanOrEqual(3_600);
  });
});

describe("a stream that fails on its first read, every time", () => {
  it("leaves the campaign never complete, not as fresh as the streams that did complete", async () => {
    const h = await scripted({ status: "running", leads: 3 });
    h.upstream.hook = ({ path }) => (path === "/api/v1/replies/" ? { status: 500, body: { message: "injected failure" } } : undefined);
    const summary = await runFullSync(h.context());
    expect(summary.outcome).toBe("partial");
    expect(summary.failures.map((failure) => failure.stream)).toEqual(["replies"]);
    const [status] = await campaignStatus(h.warehouse.db, "acme");
    expect(status).toMatchObject({ campaign_uid: CAMPAIGN, streams: { replies: null }, stalest_scan_at: null, lag_seconds: null });
    expect(status?.streams.leads).toBeInstanceOf(Date);
    // /metrics counts it behind from when the warehouse first saw it.
    const lag = (await campaignLag(h.warehouse.db, "acme", new Date(Date.now() + 3_600_000))).get(CAMPAIGN);
    expect(lag?.behindSeconds).toBeGreaterThanOrEqual(3_600);
  });
});

describe("an upstream that answers nothing at all", () => {
  it("ends the run failed, having fetched nothing, though the warehouse holds a campaign to look up", async () => {
    const h = await scripted({ status: "running", leads: 2 });
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    // Every request fails, after its retry: the campaign's detail is asked for, and gets no record.
    h.upstream.hook = () => ({ status: 503, body: { message: "unavailable" } });
    const summary = await runFullSync(h.context());
    expect(summary.failures.map((failure) => failure.stream)).toContain("campaign_detail");
    const run = await h.warehouse.db.selectFrom("sync_runs").select(["outcome", "counts"]).where("id", "=", summary.runId).executeTakeFirstOrThrow();
    const fetched = Object.values(run.counts).reduce((sum, totals) => sum + totals.fetched, 0);
    expect({ outcome: run.outcome, fetched }).toEqual({ outcome: "failed", fetched: 0 });
  });

  it("does not call failed a run whose other streams answered with nothing new past their anchors: it is partial", async () => {
    const h = await scripted({ status: "running", leads: 2, sentOn: "2026-05-01T09:00:00.000Z" });
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    // The replies listing fails every time; the clicks and opens tails answer, with nothing past their anchors.
    h.upstream.hook = (request) => (request.path === "/api/v1/replies/" ? { status: 503, body: { message: "unavailable" } } : undefined);
    const summary = await runCampaignSync(h.context(), CAMPAIGN, "events");
    expect(summary.failures.map((failure) => failure.stream)).toEqual(["replies"]);
    expect(summary.outcome).toBe("partial");
  });
});

describe("the leads walk beside the events rhythm's refresh", () => {
  it("does not soft-delete a schedule that a refresh, read after the walk began, wrote while the walk was under way", async () => {
    const h = await scripted({ status: "running", leads: 150 });
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    const leads = h.upstream.state.leads.get(CAMPAIGN) as Lead[];
    // The walk reads its first page (L1..L100), then waits for its second.
    const held = holdRequests(h.upstream, "/api/v1/leads/");
    const hook = h.upstream.hook;
    h.upstream.hook = (request) => (Number(request.query.get("offset")) > 0 ? hook?.(request) : undefined);
    const walking = runCampaignSync(h.context(), CAMPAIGN, "leads");
    await held.reached;
    // Meanwhile L1 is replied to and gets a second schedule: the events rhythm refreshes L1 and writes it.
    const first = leads[0] as Lead;
    const schedule = first.schedules[0] as Lead["schedules"][number];
    const reply = { id: 77, body_plain_text: "Yes", body_html: "<p>Yes</p>", received_on: "2026-05-01T12:00:00.000Z", reply_classification: "positive" as const };
    first.schedules = [{ ...schedule, reply_received: true, replies: [reply] }, { ...schedule, id: 5001 }];
    h.upstream.state.replies.set(CAMPAIGN, [{ ...reply, schedule_id: schedule.id, mail_from: "l1@example.com", subject: "Re: Step 1" }]);
    expect((await runCampaignSync(h.context(), CAMPAIGN, "events")).outcome).toBe("succeeded");
    held.release();
    expect((await walking).outcome).toBe("succeeded");
    // The walk's copy of L1 is older than the refresh's: it cannot say schedule 5001 is gone.
    const row = await h.warehouse.db.selectFrom("schedules").select("_deleted_at").where("id", "=", 5001).executeTakeFirstOrThrow();
    expect(row._deleted_at).toBeNull();
    // A schedule that is gone is still soft-deleted by the next walk.
    first.schedules = [first.schedules[0] as Lead["schedules"][number]];
    h.upstream.hook = undefined;
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    expect((await h.warehouse.db.selectFrom("schedules").select("_deleted_at").where("id", "=", 5001).executeTakeFirstOrThrow())._deleted_at).toBeInstanceOf(Date);
  });
});

describe("a campaign deleted upstream while one of its pages is in flight", () => {
  it("keeps the campaign's leads and schedules deleted when the page lands after discovery deleted the campaign", async () => {
    const h = await scripted({ status: "running", leads: 3 });
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    // The page is answered as the upstream stood when it was asked for, and lands after the deletion.
    const asAsked = { status: 200, body: { data: structuredClone(h.upstream.state.leads.get(CAMPAIGN)), total: 3 } };
    const held = holdRequests(h.upstream, "/api/v1/leads/", () => asAsked);
    const walking = runCampaignSync(h.context(), CAMPAIGN, "leads");
    await held.reached;
    h.upstream.state.campaigns.splice(0);
    h.upstream.state.leads.delete(CAMPAIGN);
    // Discovery takes no campaign lock: it confirms the campaign gone (#2 answers 404) and cascades meanwhile.
    expect((await runDiscovery(h.context())).outcome).toBe("succeeded");
    const { _deleted_at: deletedAt } = await h.warehouse.db.selectFrom("campaigns").select("_deleted_at").where("uid", "=", CAMPAIGN).executeTakeFirstOrThrow();
    expect(deletedAt).toBeInstanceOf(Date);
    held.release();
    await walking;
    for (const table of ["leads", "schedules"] as const) {
      const rows = await h.warehouse.db.selectFrom(table).select("_deleted_at").where("campaign_uid", "=", CAMPAIGN).execute();
      expect(rows).toHaveLength(3);
      expect(rows.map((row) => row._deleted_at)).toEqual([deletedAt, deletedAt, deletedAt]);
    }
  });
});

describe("a campaign detail that lands late", () => {
  const liveDomains = async (h: Awaited<ReturnType<typeof scripted>>) =>
    (await h.warehouse.db.selectFrom("campaign_sending_domains").select("domain_id").where("campaign_uid", "=", CAMPAIGN).where("_deleted_at", "is", null).execute())
      .map((row) => row.domain_id)
      .sort();
  const historyOf = async (h: Awaited<ReturnType<typeof scripted>>) =>
    (await h.warehouse.db.selectFrom("campaign_history").select("settings").where("campaign_uid", "=", CAMPAIGN).orderBy("valid_from").execute()).map(
      (row) => (row.settings as { sending_domains: number[] }).sending_domains,
    );

  it("writes nothing over a newer detail read: the sending domains and the history stay the newer ones", async () => {
    const h = await scripted({ status: "running", leads: 1, sentOn: "2026-05-01T09:00:00.000Z" });
    const ctx = () => h.context({ locks: h.warehouse.locks });
    expect((await runCampaignSync(ctx(), CAMPAIGN)).outcome).toBe("succeeded");
    expect(await liveDomains(h)).toEqual([1]);
    // The leads rhythm asks for the detail, answered as the campaign stood then (domain 1), but slow to arrive.
    const asAsked = { status: 200, body: structuredClone(h.upstream.state.campaigns[0]) };
    const held = holdRequests(h.upstream, "/api/v1/campaign/", () => asAsked);
    const leadsRhythm = runCampaignSync(ctx(), CAMPAIGN, "leads");
    await held.reached;
    // Meanwhile the campaign moves to domain 2, and the events rhythm (a lock of its own) reads the detail after
    // one 404 on the replies, to know whether the campaign is gone.
    (h.upstream.state.campaigns[0] as Campaign).settings.sending_domains = [2];
    let replies = 0;
    h.upstream.hook = (request) => (request.path === "/api/v1/replies/" && ++replies === 1 ? { status: 404, body: { message: "Not found" } } : undefined);
    await runCampaignSync(ctx(), CAMPAIGN, "events");
    expect({ domains: await liveDomains(h), history: await historyOf(h) }).toEqual({ domains: [2], history: [[1], [2]] });
    held.release();
    await leadsRhythm;
    expect({ domains: await liveDomains(h), history: await historyOf(h) }).toEqual({ domains: [2], history: [[1], [2]] });
  });

  it("does not bring back a campaign deleted after it was requested, nor its sending domains", async () => {
    const h = await scripted({ status: "running", leads: 2 });
    const db = h.warehouse.db;
    expect((await runFullSync(h.context({ locks: h.warehouse.locks }))).outcome).toBe("succeeded");
    const asAsked = { status: 200, body: structuredClone(h.upstream.state.campaigns[0]) };
    const held = holdRequests(h.upstream, "/api/v1/campaign/", () => asAsked);
    const walking = runCampaignSync(h.context({ locks: h.warehouse.locks }), CAMPAIGN, "leads");
    await held.reached;
    h.upstream.hook = undefined;
    h.upstream.state.campaigns.splice(0);
    h.upstream.state.leads.delete(CAMPAIGN);
    expect((await runDiscovery(h.context({ locks: h.warehouse.locks }))).outcome).toBe("succeeded");
    const { _deleted_at: deletedAt } = await db.selectFrom("campaigns").select("_deleted_at").where("uid", "=", CAMPAIGN).executeTakeFirstOrThrow();
    expect(deletedAt).toBeInstanceOf(Date);
    const history = await historyOf(h);
    held.release();
    // Nor does the late answer drive the rhythm: the warehouse holds the campaign deleted, so its leads are not walked.
    expect((await walking).streams.leads).toBeUndefined();
    const campaign = await db.selectFrom("campaigns").select("_deleted_at").where("uid", "=", CAMPAIGN).executeTakeFirstOrThrow();
    const domains = await db.selectFrom("campaign_sending_domains").select("_deleted_at").where("campaign_uid", "=", CAMPAIGN).execute();
    expect({ campaign: campaign._deleted_at, domains: domains.map((row) => row._deleted_at), history: await historyOf(h) }).toEqual({ campaign: deletedAt, domains: [deletedAt], history });
  });
});

describe("a crash in the middle of a page's transaction", () => {
  it("leaves neither the page's rows nor its checkpoint, and the resumed walk lands everything", async () => {
    const h = await scripted({ status: "running", leads: 250 });
    // The second page's transaction dies after its rows were written, as it saves its checkpoint.
    await sql`CREATE FUNCTION kill_second_leads_page() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'killed mid-transaction'; END $$`.execute(h.warehouse.db);
    await sql`CREATE TRIGGER kill_second_leads_page BEFORE INSERT OR UPDATE ON sync_checkpoints
      FOR EACH ROW WHEN (NEW.stream = 'leads' AND NEW.cursor_offset > 100) EXECUTE FUNCTION kill_second_leads_page()`.execute(h.warehouse.db);
    try {
      expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).not.toBe("succeeded");
    } finally {
      await sql`DROP TRIGGER kill_second_leads_page ON sync_checkpoints`.execute(h.warehouse.db);
      await sql`DROP FUNCTION kill_second_leads_page()`.execute(h.warehouse.db);
    }
    const checkpoint = await loadCheckpoint(h.warehouse.db, { account: "acme", campaignUid: CAMPAIGN, stream: "leads" });
    expect(checkpoint.cursorOffset).toBe(100);
    expect(await h.warehouse.db.selectFrom("leads").select("uid").execute()).toHaveLength(100);
    // Meanwhile a lead read on page 1 goes.
    const leads = h.upstream.state.leads.get(CAMPAIGN) as Lead[];
    leads.splice(3, 1);
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    const live = await h.warehouse.db.selectFrom("leads").select("uid").where("_deleted_at", "is", null).execute();
    expect(live.map((row) => row.uid).sort()).toEqual(leads.map((lead) => lead.uid).sort());
  });
});
