import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { FINAL_WALKS, isFinalLeadsWalk } from "../../src/sync/campaign-sync.ts";
import { loadCheckpoint } from "../../src/sync/checkpoints.ts";
import { currentRejected } from "../../src/sync/counts.ts";
import { APPEND_PROOF_MS } from "../../src/sync/run-paged.ts";
import { CampaignBusyError, runCampaignSync, runDiscovery, runFullSync } from "../../src/sync/runs.ts";
import { UpstreamClient } from "../../src/upstream/client.ts";
import type { Lead, Reply } from "../../src/upstream/resources.ts";
import { campaignLockName } from "../../src/warehouse/run-locks.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns, type ScriptedCampaign } from "../support/scripted-campaign.ts";
import { buildLead, buildSequence, holdRequests } from "../support/scripted-upstream.ts";

/**
 * The engine against an upstream scripted request by request (issue 16): each
 * scenario replays the exact sequence in which the warehouse used to end wrong
 * while the run said `succeeded`.
 */

const databaseUrl = useTestDatabase("engine");
const CAMPAIGN = "cmp_scripted";
const scripted = useScriptedCampaigns(databaseUrl, CAMPAIGN);
type Harness = ScriptedCampaign;

/** A running (or complete) campaign with `count` leads L1..Ln, one schedule each (ids 1001..), all sending sequence 1. */
const harness = (count: number, status: "running" | "complete" = "running") => scripted({ status, leads: count });

async function liveLeads(h: Harness): Promise<string[]> {
  const rows = await h.warehouse.db.selectFrom("leads").select("uid").where("campaign_uid", "=", CAMPAIGN).where("_deleted_at", "is", null).execute();
  return rows.map((row) => row.uid).sort();
}

/** A client of the harness's upstream with a small page size, so that page boundaries fall where a test wants them. */
const clients: UpstreamClient[] = [];
function smallPages(h: Harness, pageSize: number): UpstreamClient {
  const client = new UpstreamClient({ baseUrl: h.upstream.url, apiKey: "k", requestsPerSecond: 5_000, maxRetries: 1, retryBaseMs: 1, retryCapMs: 5, timeoutMs: 5_000, pageSize });
  clients.push(client);
  return client;
}
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
});

const leadsOf = (h: Harness) => h.upstream.state.leads.get(CAMPAIGN) as Lead[];
const uids = (leads: readonly Lead[]) => leads.map((lead) => lead.uid).sort();
const isLeadsPage = (path: string, offset: number) => (query: URLSearchParams) => path === "/api/v1/leads/" && Number(query.get("offset")) >= offset;

describe("1. a listing that shifts under the cursor", () => {
  it("reads the record a deletion pulled back across the cursor, with the total unchanged, and soft-deletes only what is gone", async () => {
    const h = await harness(150);
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    let shifted = false;
    h.upstream.hook = ({ path, query }) => {
      if (!shifted && isLeadsPage(path, 1)(query)) {
        shifted = true;
        leadsOf(h).splice(9, 1); // L10 goes
        leadsOf(h).push(buildLead("L151", 1151)); // L151 arrives: the total stays 150
      }
      return undefined;
    };
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    const live = await liveLeads(h);
    expect(live).toContain("L101");
    expect(live).toContain("L151");
    // L10 was read on page 1, before it went: the next walk retires it.
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    expect(await liveLeads(h)).toEqual(uids(leadsOf(h)));
  });

  it("walks again, without soft-deleting, when a record moved behind the cursor", async () => {
    const h = await harness(150);
    await runCampaignSync(h.context(), CAMPAIGN);
    let moved = false;
    h.upstream.hook = ({ path, query }) => {
      if (!moved && isLeadsPage(path, 1)(query)) {
        moved = true;
        const [lead] = leadsOf(h).splice(139, 1);
        leadsOf(h).unshift(lead as Lead);
      }
      return undefined;
    };
    const summary = await runCampaignSync(h.context(), CAMPAIGN);
    expect(summary.outcome).toBe("succeeded");
    expect(await liveLeads(h)).toEqual(uids(leadsOf(h)));
  });

  it("walks again when a record it read vanished and another arrived behind the cursor, though the count matches the total", async () => {
    const h = await harness(150);
    await runCampaignSync(h.context(), CAMPAIGN);
    let requests = 0;
    h.upstream.hook = ({ path, query }) => {
      if (!isLeadsPage(path, 1)(query)) return undefined;
      requests += 1;
      if (requests === 1) leadsOf(h).splice(4, 1); // L5, read on page 1, goes: the next page lost its anchor
      if (requests === 2) leadsOf(h).unshift(buildLead("L0", 1000)); // and L0 arrives where the walk has been
      return undefined;
    };
    const summary = await runCampaignSync(h.context(), CAMPAIGN);
    expect(summary.outcome).toBe("succeeded");
    expect(await liveLeads(h)).toEqual(uids(leadsOf(h)));
  });

  it("gives a finished campaign a second final walk, which lands what a vanished and an arrived lead in one gap hid from the first", async () => {
    const h = await harness(150, "complete");
    let swapped = false;
    h.upstream.hook = ({ path, query }) => {
      if (swapped || !isLeadsPage(path, 1)(query)) return undefined;
      swapped = true;
      // Between the same two pages: L5, read on page 1, goes and L0 arrives before the cursor. The anchor stays
      // put and the count matches the total: the first walk proves itself without L0.
      leadsOf(h).splice(4, 1);
      leadsOf(h).unshift(buildLead("L0", 1000));
      return undefined;
    };
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    expect(await liveLeads(h)).not.toContain("L0");
    const key = { account: "acme", campaignUid: CAMPAIGN, stream: "leads" };
    expect(isFinalLeadsWalk(await loadCheckpoint(h.warehouse.db, key))).toBe(false);
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    expect(await liveLeads(h)).toEqual(uids(leadsOf(h)));
    expect(isFinalLeadsWalk(await loadCheckpoint(h.warehouse.db, key))).toBe(true);
  });

  it("asks the total once more, instead of walking again, when only the last page's total is short", async () => {
    const h = await harness(150);
    h.upstream.hook = ({ path, query }) => (path === "/api/v1/leads/" && query.get("offset") === "99" ? { status: 200, body: { data: leadsOf(h).slice(99), total: 148 } } : undefined);
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    const leadsRequests = h.upstream.requests.filter((request) => request.startsWith("/api/v1/leads/"));
    expect(leadsRequests.map((request) => new URL(request, "http://upstream").search)).toEqual([
      `?campaign_uid=${CAMPAIGN}&limit=100&offset=0`,
      `?campaign_uid=${CAMPAIGN}&limit=100&offset=99`,
      `?campaign_uid=${CAMPAIGN}&limit=1&offset=0`,
    ]);
    expect(await liveLeads(h)).toEqual(uids(leadsOf(h)));
  });

  it("asks an empty page again, and soft-deletes nothing when the listing never shows its rest", async () => {
    const h = await harness(150);
    await runCampaignSync(h.context(), CAMPAIGN);
    let glitches = 0;
    h.upstream.hook = ({ path, query }) => (isLeadsPage(path, 1)(query) && glitches++ < 1 ? { status: 200, body: { data: [], total: 150 } } : undefined);
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    expect(await liveLeads(h)).toHaveLength(150);

    h.upstream.hook = ({ path, query }) => (isLeadsPage(path, 1)(query) ? { status: 200, body: { data: [], total: 150 } } : undefined);
    const stuck = await runCampaignSync(h.context(), CAMPAIGN);
    expect(stuck.outcome).toBe("partial");
    // Empty pages also hide the anchor, so the walk may give up restarting before it gives up re-walking.
    expect(stuck.failures.map((failure) => failure.error.name)).toEqual([expect.stringMatching(/^(IncompleteWalkError|UnstableListingError)$/)]);
    expect(await liveLeads(h)).toHaveLength(150);
  });
});

describe("1b. an append stream's continuation", () => {
  const openAt = (minute: number) => ({ schedule_id: 1001, opened_on: new Date(Date.UTC(2026, 4, 1, 10, minute)).toISOString() });
  const liveOpens = async (h: Harness) =>
    (await h.warehouse.db.selectFrom("email_opens").select("opened_on").where("_deleted_at", "is", null).orderBy("opened_on").execute()).map((row) => row.opened_on.toISOString());

  it("walks from the start again once its last proof is an hour old, and finds what vanished while another arrived before its cursor", async () => {
    const h = await harness(1);
    const opens = Array.from({ length: 150 }, (_, minute) => openAt(minute + 10));
    h.upstream.state.opens.set(CAMPAIGN, opens);
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    // One open read before goes, one arrives before the cursor (the listing is in no particular order): the total stays 150.
    opens.splice(5, 1);
    opens.unshift(openAt(0));
    const opensRequested = (since: number) => h.upstream.requests.slice(since).filter((request) => request.startsWith("/api/v1/campaign/email-open-events/"));
    let since = h.upstream.requests.length;
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    // Within the hour the continuation reads only its end, where nothing changed.
    expect(opensRequested(since)).toEqual([expect.stringContaining("offset=149")]);

    const key = { account: "acme", campaignUid: CAMPAIGN, stream: "email_opens" };
    const state = (await loadCheckpoint(h.warehouse.db, key)).state;
    const anHourAgo = new Date(Date.now() - APPEND_PROOF_MS).toISOString();
    await h.warehouse.db.updateTable("sync_checkpoints").set({ state: JSON.stringify({ ...state, provenAt: anHourAgo }) }).where("stream", "=", "email_opens").execute();
    since = h.upstream.requests.length;
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    expect(opensRequested(since)[0]).toContain("offset=0");
    expect(await liveOpens(h)).toEqual(opens.map((open) => open.opened_on).sort());
  });
});

describe("1c. a record one page lists twice", () => {
  const leadsKey = { account: "acme", campaignUid: CAMPAIGN, stream: "leads" };
  const requestsTo = (paths: readonly string[], path: string) => paths.filter((requested) => requested === path).length;

  it("proves the walk, whose every position was read: it names the duplicate, writes the lead once, and soft-deletes only the lead gone", async () => {
    const h = await harness(3);
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    // L3 goes upstream, and L1 is listed twice in its place: one page of three, the total three.
    const [first, second] = leadsOf(h) as [Lead, Lead];
    h.upstream.state.leads.set(CAMPAIGN, [first, { ...first }, second]);
    h.requested();
    const summary = await runCampaignSync(h.context(), CAMPAIGN, "leads");
    expect(summary.failures).toEqual([]);
    expect(summary.outcome).toBe("succeeded");
    expect(summary.fieldIssues).toEqual({ "leads.duplicate": 1 });
    const run = await h.warehouse.db.selectFrom("sync_runs").select("field_issues").where("id", "=", summary.runId).executeTakeFirstOrThrow();
    expect(run.field_issues).toEqual({ "leads.duplicate": 1 });
    // One walk of one page, and one lookup: L3's, which confirms it gone.
    const requested = h.requested();
    expect(requestsTo(requested, "/api/v1/leads/")).toBe(1);
    expect(requestsTo(requested, "/api/v1/lead/")).toBe(1);
    expect(await liveLeads(h)).toEqual(["L1", "L2"]);
    const schedules = await h.warehouse.db.selectFrom("schedules").select("id").where("_deleted_at", "is", null).orderBy("id").execute();
    expect(schedules.map((row) => Number(row.id))).toEqual([1001, 1002]);
    expect((await loadCheckpoint(h.warehouse.db, leadsKey)).state.provenAt).toBeDefined();
  });

  it("gives a terminal campaign its final walk", async () => {
    const h = await harness(2, "complete");
    const [first, second] = leadsOf(h) as [Lead, Lead];
    h.upstream.state.leads.set(CAMPAIGN, [first, { ...first }, second]);
    for (let walk = 1; walk <= FINAL_WALKS; walk += 1) expect((await runCampaignSync(h.context(), CAMPAIGN)).failures).toEqual([]);
    expect(isFinalLeadsWalk(await loadCheckpoint(h.warehouse.db, leadsKey))).toBe(true);
  });

  it("keeps an open event once, and the stream's continuation reads only its end", async () => {
    const h = await harness(1);
    const open = (minute: number) => ({ schedule_id: 1001, opened_on: new Date(Date.UTC(2026, 4, 3, 10, minute)).toISOString() });
    h.upstream.state.opens.set(CAMPAIGN, [open(0), open(0), open(1)]);
    const summary = await runCampaignSync(h.context(), CAMPAIGN);
    expect(summary.failures).toEqual([]);
    expect(summary.fieldIssues).toEqual({ "email_opens.duplicate": 1 });
    expect(await h.warehouse.db.selectFrom("email_opens").select("opened_on").execute()).toHaveLength(2);
    const since = h.upstream.requests.length;
    const next = await runCampaignSync(h.context(), CAMPAIGN);
    expect(next.failures).toEqual([]);
    // The proof's repeat still stands beside the two rows the warehouse counts: nothing sends it back to the start.
    const opensRequested = h.upstream.requests.slice(since).filter((request) => request.startsWith("/api/v1/campaign/email-open-events/"));
    expect(opensRequested).toEqual([expect.stringContaining("offset=2")]);
  });

  it("names a record a whole listing (workspaces #18, replies #13) repeats, whatever its copies hold, and writes it once", async () => {
    const h = await harness(1);
    const [workspace] = h.upstream.state.workspaces;
    h.upstream.state.workspaces.push({ ...workspace!, name: "Main (copy)", credits_remaining: 5 });
    const reply = (classification: Reply["reply_classification"]): Reply => ({
      id: 7,
      schedule_id: 1001,
      body_plain_text: `reply ${classification}`,
      body_html: `<p>reply ${classification}</p>`,
      received_on: "2026-05-01T10:00:00.000Z",
      mail_from: "lead@example.com",
      subject: "Re: Step 1",
      reply_classification: classification,
    });
    h.upstream.state.replies.set(CAMPAIGN, [reply("positive"), reply("negative")]);

    const discovery = await runDiscovery(h.context());
    const campaign = await runCampaignSync(h.context(), CAMPAIGN);

    expect(discovery.fieldIssues).toMatchObject({ "workspaces.duplicate": 1 });
    expect(campaign.fieldIssues).toMatchObject({ "replies.duplicate": 1 });
    const run = await h.warehouse.db.selectFrom("sync_runs").select("field_issues").where("id", "=", campaign.runId).executeTakeFirstOrThrow();
    expect(run.field_issues).toMatchObject({ "replies.duplicate": 1 });
    // One row each, the later copy's values, as for a paged listing.
    expect(await h.warehouse.db.selectFrom("workspaces").select(["name", "credits_remaining"]).execute()).toEqual([{ name: "Main (copy)", credits_remaining: 5 }]);
    expect(await h.warehouse.db.selectFrom("replies").select("reply_classification").execute()).toEqual([{ reply_classification: "negative" }]);
  });

  it("takes a lead met again on a later page for one that moved: the walk proves nothing and deletes nothing", async () => {
    const h = await harness(150);
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    // L1 again at the end: page 1 holds it once, and so does page 2 (offset 99), so no one answer lists it twice.
    leadsOf(h).push({ ...(leadsOf(h)[0] as Lead) });
    const summary = await runCampaignSync(h.context(), CAMPAIGN, "leads");
    expect(summary.failures.map((failure) => failure.error.name)).toEqual(["IncompleteWalkError"]);
    expect(summary.fieldIssues).toEqual({});
    expect(await liveLeads(h)).toHaveLength(150);
  });
});

describe("2. a resumed partial walk", () => {
  it("is never taken as a finished campaign's final scan", async () => {
    const h = await harness(150);
    // Cycle N: page 1 commits, then the walk fails.
    h.upstream.hook = ({ path, query }) => (isLeadsPage(path, 1)(query) ? { status: 404, body: { message: "gone for a moment" } } : undefined);
    const interrupted = await runCampaignSync(h.context(), CAMPAIGN);
    expect(interrupted.outcome).toBe("partial");
    // The campaign completes; the first page's lead gets its send.
    h.upstream.hook = undefined;
    (h.upstream.state.campaigns[0] as { status: string }).status = "complete";
    const first = leadsOf(h)[0]?.schedules[0] as { sent_on: string | null; status: string };
    first.sent_on = "2026-05-02T10:00:00.000Z";
    first.status = "sent";

    // Cycle N+1 resumes at the cursor and finishes the walk: not a full scan of the complete campaign.
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    const key = { account: "acme", campaignUid: CAMPAIGN, stream: "leads" };
    expect((await loadCheckpoint(h.warehouse.db, key)).state.scannedStatus).not.toBe("complete");

    // Cycle N+2 walks from the start and lands the send: the first of the final walks; N+3 makes the second.
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    expect((await loadCheckpoint(h.warehouse.db, key)).state).toMatchObject({ scannedStatus: "complete", terminalWalks: 1 });
    const schedule = await h.warehouse.db.selectFrom("schedules").select("sent_on").where("id", "=", 1001).executeTakeFirstOrThrow();
    expect(schedule.sent_on).toEqual(new Date("2026-05-02T10:00:00.000Z"));
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    expect(isFinalLeadsWalk(await loadCheckpoint(h.warehouse.db, key))).toBe(true);
    const requestsBefore = h.upstream.requests.length;
    await runCampaignSync(h.context(), CAMPAIGN);
    expect(h.upstream.requests.slice(requestsBefore).filter((request) => request.startsWith("/api/v1/leads/"))).toEqual([]);
  });
});

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

describe("6. timestamps below the millisecond", () => {
  it("keep two opens a few microseconds apart as two rows, and the walk complete", async () => {
    const h = await harness(1);
    h.upstream.state.opens.set(CAMPAIGN, [
      { schedule_id: 1001, opened_on: "2026-05-01T10:00:00.123456Z" },
      { schedule_id: 1001, opened_on: "2026-05-01T10:00:00.123789Z" },
    ]);
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    const opens = await sql<{ opened_on: string }>`select to_char(opened_on at time zone 'UTC', 'HH24:MI:SS.US') as opened_on from email_opens order by opened_on`.execute(h.warehouse.db);
    expect(opens.rows.map((row) => row.opened_on)).toEqual(["10:00:00.123456", "10:00:00.123789"]);
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
  });
});

describe("7. smaller, same spirit", () => {
  it("never lets two processes sync one campaign at once: the second says so and skips it", async () => {
    const h = await harness(10);
    const { reached, release } = holdRequests(h.upstream, "/api/v1/leads/");
    const context = h.context({ locks: h.warehouse.locks });
    const first = runCampaignSync(context, CAMPAIGN, "leads");
    await reached;
    // The same rhythm is refused, and no run row is opened for it; the other rhythm may run beside it.
    await expect(runCampaignSync(h.context({ locks: h.warehouse.locks, trigger: "worker" }), CAMPAIGN, "leads")).rejects.toThrow(CampaignBusyError);
    await expect(runCampaignSync(h.context({ locks: h.warehouse.locks, trigger: "worker" }), CAMPAIGN, "all")).rejects.toThrow(CampaignBusyError);
    expect((await runCampaignSync(h.context({ locks: h.warehouse.locks, trigger: "worker" }), CAMPAIGN, "events")).outcome).toBe("succeeded");
    release();
    expect((await first).outcome).toBe("succeeded");
    expect((await runCampaignSync(h.context({ locks: h.warehouse.locks }), CAMPAIGN)).outcome).toBe("succeeded");
    const runs = await h.warehouse.db.selectFrom("sync_runs").select(["rhythm", "outcome"]).orderBy("id").execute();
    expect(runs).toEqual([
      { rhythm: "leads", outcome: "succeeded" },
      { rhythm: "events", outcome: "succeeded" },
      { rhythm: null, outcome: "succeeded" },
    ]);
  });

  it("holds a campaign's run with one session: the campaign's lock and the lock its run row names", async () => {
    const h = await harness(10);
    const { reached, release } = holdRequests(h.upstream, "/api/v1/leads/");
    const running = runCampaignSync(h.context({ locks: h.warehouse.locks }), CAMPAIGN, "leads");
    await reached;
    const { holder } = await h.warehouse.db.selectFrom("sync_runs").select("holder").where("outcome", "=", "running").executeTakeFirstOrThrow();
    const keys = [campaignLockName("acme", CAMPAIGN, "leads"), holder as string].map((name) => `${h.warehouse.schema}/${name}`);
    const { rows } = await sql<{ key: string; pid: number }>`
      SELECT key, l.pid FROM unnest(CAST(${keys} AS text[])) AS key
        JOIN pg_locks l ON l.locktype = 'advisory' AND l.granted AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended(key, 0)`.execute(h.warehouse.db);
    expect(rows).toHaveLength(2);
    expect(new Set(rows.map((row) => row.pid)).size).toBe(1);
    release();
    expect((await running).outcome).toBe("succeeded");
  });

  it("takes a run's locks all or none: one held elsewhere leaves the others free", async () => {
    const h = await harness(1);
    const [free, taken] = [campaignLockName("acme", CAMPAIGN, "leads"), campaignLockName("acme", CAMPAIGN, "events")];
    const elsewhere = await h.warehouse.locks.acquire([taken]);
    expect(await h.warehouse.locks.acquire([free, taken])).toBeNull();
    expect([...(await h.warehouse.locks.held(h.warehouse.db, [free, taken]))]).toEqual([taken]);
    await elsewhere?.release();
  });

  it("keeps the locks of two warehouses in one database apart: the same campaign syncs in both at once", async () => {
    const [one, other] = [await harness(3), await harness(3)];
    const name = campaignLockName("acme", CAMPAIGN, "leads");
    const held = await one.warehouse.locks.acquire([name]);
    expect(held).not.toBeNull();
    expect(await one.warehouse.locks.acquire([name])).toBeNull();
    const beside = await other.warehouse.locks.acquire([name]);
    expect(beside).not.toBeNull();
    expect([...(await other.warehouse.locks.held(other.warehouse.db, [name]))]).toEqual([name]);
    await beside?.release();
    expect([...(await other.warehouse.locks.held(other.warehouse.db, [name]))]).toEqual([]);
    expect([...(await one.warehouse.locks.held(one.warehouse.db, [name]))]).toEqual([name]);
    await held?.release();
  });

  it("soft-deletes a campaign that vanished upstream together with its leads, schedules and events", async () => {
    const h = await harness(5);
    h.upstream.state.opens.set(CAMPAIGN, [{ schedule_id: 1001, opened_on: "2026-05-01T10:00:00.000Z" }]);
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    h.upstream.state.campaigns.splice(0);
    await runFullSync(h.context());
    const db = h.warehouse.db;
    for (const table of ["campaigns", "leads", "schedules", "email_opens", "email_sequences", "campaign_sending_domains"] as const) {
      const live = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where _deleted_at is null`.execute(db);
      expect({ table, live: live.rows[0]?.n }).toEqual({ table, live: 0 });
    }
  });

  it("fails a run of one campaign that the upstream does not know and the warehouse never held, naming it and writing nothing for it", async () => {
    const h = await harness(2);
    const typo = await runFullSync(h.context(), { campaignUid: "cmp_typo" });
    expect(typo.outcome).toBe("failed");
    expect(typo.failures).toMatchObject([{ campaignUid: "cmp_typo", error: { message: expect.stringMatching(/^no such campaign/) } }]);
    expect(await h.warehouse.db.selectFrom("sync_checkpoints").select("stream").where("campaign_uid", "=", "cmp_typo").execute()).toEqual([]);
    // One the warehouse holds is deleted upstream when it answers 404.
    expect((await runFullSync(h.context(), { campaignUid: CAMPAIGN })).outcome).toBe("succeeded");
    h.upstream.state.campaigns.splice(0);
    expect((await runFullSync(h.context(), { campaignUid: CAMPAIGN })).outcome).toBe("succeeded");
    const held = await h.warehouse.db.selectFrom("campaigns").select("_deleted_at").where("uid", "=", CAMPAIGN).executeTakeFirstOrThrow();
    expect(held._deleted_at).not.toBeNull();
  });

  it("keeps a sequence #9 no longer knows deleted while schedules still name it, and brings it back once #9 answers again", async () => {
    const h = await harness(2);
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    const sequence = h.upstream.state.sequences.get(1);
    h.upstream.state.sequences.delete(1);
    const held = () => h.warehouse.db.selectFrom("email_sequences").select(["_deleted_at", "_synced_at"]).where("id", "=", 1).executeTakeFirstOrThrow();
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    const deleted = await held();
    expect(deleted._deleted_at).not.toBeNull();
    // The next walk of the leads reads the schedules' copies of it: they neither bring it back nor make it go again.
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    expect(await held()).toEqual(deleted);
    h.upstream.state.sequences.set(1, sequence as NonNullable<typeof sequence>);
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    expect((await held())._deleted_at).toBeNull();
  });

  it("sees an email sequence's label change on the campaign's next cycle", async () => {
    const h = await harness(2);
    await runCampaignSync(h.context(), CAMPAIGN);
    (h.upstream.state.sequences.get(1) as { label: string }).label = "approved";
    await runCampaignSync(h.context(), CAMPAIGN);
    expect(await h.warehouse.db.selectFrom("email_sequences").select("label").where("id", "=", 1).executeTakeFirstOrThrow()).toEqual({ label: "approved" });
  });
});
