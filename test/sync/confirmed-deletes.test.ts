import { describe, expect, it } from "vitest";
import { isFinalLeadsWalk } from "../../src/sync/campaign-sync.ts";
import { loadCheckpoint } from "../../src/sync/checkpoints.ts";
import { CONFIRMATIONS_PER_WALK } from "../../src/sync/confirm-missing.ts";
import { runCampaignSync } from "../../src/sync/runs.ts";
import { verify } from "../../src/sync/verify.ts";
import type { Lead } from "../../src/upstream/resources.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns, type ScriptedCampaign } from "../support/scripted-campaign.ts";

/** A proven leads walk soft-deletes a lead it did not see only once the lead's lookup (#12) confirms it is gone. */

const databaseUrl = useTestDatabase("confirmed_deletes");
const CAMPAIGN = "cmp_confirm";
const scripted = useScriptedCampaigns(databaseUrl, CAMPAIGN);
const LOOKUP = "/api/v1/lead/";
const KEY = { account: "acme", campaignUid: CAMPAIGN, stream: "leads" };

async function liveLeads(h: ScriptedCampaign): Promise<Set<string>> {
  const rows = await h.warehouse.db.selectFrom("leads").select("uid").where("_deleted_at", "is", null).execute();
  return new Set(rows.map((row) => row.uid));
}

async function scheduleDeleted(h: ScriptedCampaign, id: number): Promise<boolean> {
  const row = await h.warehouse.db.selectFrom("schedules").select("_deleted_at").where("id", "=", id).executeTakeFirstOrThrow();
  return row._deleted_at !== null;
}

const lookups = (h: ScriptedCampaign) => h.requested().filter((path) => path === LOOKUP).length;

/** Removes the leads named from the campaign's listing; with `elsewhere`, they still answer their lookups (listed under another key). */
function unlist(h: ScriptedCampaign, uids: readonly string[], elsewhere = false): void {
  const listed = h.upstream.state.leads.get(CAMPAIGN) as Lead[];
  const names = new Set(uids);
  h.upstream.state.leads.set(CAMPAIGN, listed.filter((lead) => !names.has(lead.uid)));
  if (elsewhere) h.upstream.state.leads.set("unlisted", listed.filter((lead) => names.has(lead.uid)));
}

const uids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, index) => `L${from + index}`);

describe("a lead that moved behind the cursor while one already read went", () => {
  it("stays live, written from its lookup, and the one that went (read before it went) is soft-deleted by the next walk", async () => {
    const h = await scripted({ status: "running", leads: 150 });
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    const leads = h.upstream.state.leads.get(CAMPAIGN) as Lead[];
    let done = false;
    h.upstream.hook = ({ path, query }) => {
      if (!done && path === "/api/v1/leads/" && Number(query.get("offset")) > 0) {
        done = true;
        const [moved] = leads.splice(139, 1); // L140 moves to the front
        // It moves with a new schedule: its lookup brings it in, as a refresh would.
        const schedule = (moved as Lead).schedules[0] as Lead["schedules"][number];
        leads.unshift({ ...(moved as Lead), schedules: [schedule, { ...schedule, id: 5140 }] });
        leads.splice(5, 1); // and L5 (now at index 5) goes
      }
      return undefined;
    };
    h.requested();
    const moved = await runCampaignSync(h.context(), CAMPAIGN, "leads");
    expect(moved.outcome).toBe("succeeded");
    // Total and later positions unchanged: the walk proved itself whole, and asked about the one lead it did not see.
    expect(lookups(h)).toBe(1);
    // The listing left out a lead its lookup found: named on the run, as a deviation is.
    expect(moved.fieldIssues).toEqual({ "leads.listing": 1 });
    let live = await liveLeads(h);
    expect(live.has("L140")).toBe(true);
    expect(await scheduleDeleted(h, 1140)).toBe(false);
    expect(await scheduleDeleted(h, 5140)).toBe(false);
    // L5 was read before it went: this walk vouches for it, and only counting tells the warehouse holds one too many.
    expect(live.has("L5")).toBe(true);
    expect((await verify(h.context(), { campaignUid: CAMPAIGN })).problems).toBeGreaterThan(0);
    // The next walk does not see L5, and its lookup confirms it gone: nothing left out this time.
    const confirmed = await runCampaignSync(h.context(), CAMPAIGN, "leads");
    expect(confirmed.outcome).toBe("succeeded");
    expect(confirmed.fieldIssues).toEqual({});
    // A 404 is asked once more before it stands.
    expect(lookups(h)).toBe(2);
    live = await liveLeads(h);
    expect(live.has("L140")).toBe(true);
    expect(live.has("L5")).toBe(false);
    expect(await scheduleDeleted(h, 1005)).toBe(true);
    expect(live.size).toBe(149);
    expect((await verify(h.context(), { campaignUid: CAMPAIGN })).problems).toBe(0);
  });
});

describe("confirming the deletions of a proven leads walk", () => {
  it("asks nothing when the walk saw every lead", async () => {
    const h = await scripted({ status: "running", leads: 30 });
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    h.requested();
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    expect(lookups(h)).toBe(0);
  });

  it("soft-deletes leads gone upstream in the same walk, each asked twice (a 404 is asked once more), with their schedules", async () => {
    const h = await scripted({ status: "running", leads: 30 });
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    unlist(h, ["L3", "L17"]);
    h.requested();
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    expect(lookups(h)).toBe(4);
    const live = await liveLeads(h);
    expect(live.has("L3") || live.has("L17")).toBe(false);
    expect(live.size).toBe(28);
    expect(await scheduleDeleted(h, 1003)).toBe(true);
    expect((await loadCheckpoint(h.warehouse.db, KEY)).state.unconfirmedMissing).toBeUndefined();
  });

  it("takes more gone leads than it asks about for a bulk deletion when every lookup confirms one", async () => {
    const h = await scripted({ status: "running", leads: 120 });
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    unlist(h, uids(31, 90));
    h.requested();
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    // Each lead asked about answers 404 twice.
    expect(lookups(h)).toBe(2 * CONFIRMATIONS_PER_WALK);
    expect((await liveLeads(h)).size).toBe(60);
  });

  it("deletes only the confirmed ones when a lead it did not see answers its lookup, and leaves the rest for a later walk", async () => {
    const h = await scripted({ status: "running", leads: 120 });
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    // 25 leads the listing no longer shows but that still exist, and 25 that are gone.
    const present = uids(11, 35);
    const gone = uids(61, 85);
    unlist(h, present, true);
    unlist(h, gone);
    h.requested();
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    const asked = lookups(h);
    const live = await liveLeads(h);
    for (const uid of present) expect(live.has(uid)).toBe(true);
    const deleted = gone.filter((uid) => !live.has(uid));
    // The sample holds some of each (all 20 gone has a chance near 1e-9): only the gone ones asked about went.
    expect(deleted.length).toBeGreaterThan(0);
    expect(deleted.length).toBeLessThan(CONFIRMATIONS_PER_WALK);
    // Each lead asked about once, the gone ones once more.
    expect(asked).toBe(CONFIRMATIONS_PER_WALK + deleted.length);
    // Those not asked about, present or gone, wait for a later walk.
    expect((await loadCheckpoint(h.warehouse.db, KEY)).state.unconfirmedMissing).toBe(present.length + gone.length - CONFIRMATIONS_PER_WALK);
  });

  it("leaves a lead live when its lookup fails, reports the run partial, and deletes it on the next walk", async () => {
    const h = await scripted({ status: "running", leads: 30 });
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    unlist(h, ["L5"]);
    h.upstream.hook = ({ path }) => (path === LOOKUP ? { status: 503, body: { message: "unavailable" } } : undefined);
    const failed = await runCampaignSync(h.context(), CAMPAIGN, "leads");
    expect(failed.outcome).toBe("partial");
    expect(failed.failures.map((failure) => failure.error.name)).toEqual(["UnconfirmedMissingError"]);
    expect((await liveLeads(h)).has("L5")).toBe(true);
    expect(await scheduleDeleted(h, 1005)).toBe(false);
    h.upstream.hook = undefined;
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    expect((await liveLeads(h)).has("L5")).toBe(false);
  });

  it("sets aside a lookup answer that cannot be placed under the key asked for, keeps its lead live, and ends the run partial", async () => {
    const h = await scripted({ status: "running", leads: 3 });
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    const listed = h.upstream.state.leads.get(CAMPAIGN) as Lead[];
    unlist(h, ["L2"]);
    // L2's lookup answers wrapped in an envelope: the record it holds has no uid.
    const wrapped = { data: listed[1] };
    h.upstream.hook = ({ path, query }) => (path === LOOKUP && query.get("lead_uid") === "L2" ? { status: 200, body: wrapped } : undefined);
    const summary = await runCampaignSync(h.context(), CAMPAIGN, "leads");
    expect(summary.outcome).toBe("partial");
    expect(summary.rejected).toBe(1);
    const rejected = () => h.warehouse.db.selectFrom("rejected_records").select(["stream", "record_key", "payload", "resolved_at"]).execute();
    expect(await rejected()).toEqual([{ stream: "leads", record_key: "requested=L2", payload: wrapped, resolved_at: null }]);
    expect((await liveLeads(h)).has("L2")).toBe(true);
    expect(await scheduleDeleted(h, 1002)).toBe(false);
    // Listed again, the lead lands from its listing, and the proven walk resolves the answer set aside.
    h.upstream.hook = undefined;
    h.upstream.state.leads.set(CAMPAIGN, listed);
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    expect((await rejected())[0]?.resolved_at).not.toBeNull();
  });

  it("does not count a terminal campaign's walk as its final one while a lead it did not see is undecided", async () => {
    const h = await scripted({ status: "running", leads: 30 });
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    (h.upstream.state.campaigns[0] as { status: string }).status = "complete";
    unlist(h, ["L5"]);
    h.upstream.hook = ({ path }) => (path === LOOKUP ? { status: 503, body: { message: "unavailable" } } : undefined);
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("partial");
    const checkpoint = await loadCheckpoint(h.warehouse.db, KEY);
    expect(checkpoint.state.unconfirmedMissing).toBe(1);
    expect(isFinalLeadsWalk(checkpoint)).toBe(false);
    // The next leads rhythm walks again, confirms the deletion, and that walk is the final one.
    h.upstream.hook = undefined;
    h.requested();
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    expect(h.requested()).toContain("/api/v1/leads/");
    expect((await liveLeads(h)).has("L5")).toBe(false);
    expect(isFinalLeadsWalk(await loadCheckpoint(h.warehouse.db, KEY))).toBe(true);
  });
});
