import { describe, expect, it } from "vitest";
import { FINAL_WALKS, isFinalLeadsWalk } from "../../src/sync/campaign-sync.ts";
import { loadCheckpoint } from "../../src/sync/checkpoints.ts";
import { APPEND_PROOF_MS } from "../../src/sync/run-paged.ts";
import { runCampaignSync, runDiscovery } from "../../src/sync/runs.ts";
import type { Lead, Reply } from "../../src/upstream/resources.ts";
import { buildLead } from "../support/scripted-upstream.ts";
import { CAMPAIGN, isLeadsPage, leadsOf, liveLeads, uids, useEngineHarness, type Harness } from "./engine-harness.ts";

/** Scripted scenarios (engine-harness.ts) of a walk: a listing that shifts, repeats a record or is resumed, and an append stream's continuation. */

const harness = useEngineHarness("engine_walks");

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
    // One walk of one page, and L3's lookup, whose 404 is asked once more before it confirms L3 gone.
    const requested = h.requested();
    expect(requestsTo(requested, "/api/v1/leads/")).toBe(1);
    expect(requestsTo(requested, "/api/v1/lead/")).toBe(2);
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
