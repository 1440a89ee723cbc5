import { describe, expect, it } from "vitest";
import { isFinalLeadsWalk } from "../../src/sync/campaign-sync.ts";
import { loadCheckpoint } from "../../src/sync/checkpoints.ts";
import { runCampaignSync } from "../../src/sync/runs.ts";
import { UNKNOWN_TOTAL } from "../../src/sync/walk-proof.ts";
import { PATHS } from "../../src/upstream/endpoints.ts";
import type { Lead } from "../../src/upstream/resources.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns, type ScriptedCampaign } from "../support/scripted-campaign.ts";
import { memoryLogger } from "../upstream/support.ts";

/**
 * A leads listing whose pages announce no usable total (or come as a bare
 * array): every lead lands with its schedules, the run names the deviation,
 * and a lead gone upstream is soft-deleted only once two walks in a row did
 * not see it (and its lookup confirms it gone).
 */

const databaseUrl = useTestDatabase("untotalled_walks");
const CAMPAIGN = "cmp_untotalled";
const scripted = useScriptedCampaigns(databaseUrl, CAMPAIGN);
const LEADS = "/api/v1/leads/";
const LOOKUP = "/api/v1/lead/";
const KEY = { account: "acme", campaignUid: CAMPAIGN, stream: "leads" };

/** "huge total": a total beyond the checkpoint's 4-byte column (sync_checkpoints.upstream_total), which no walk can use either. */
type Shape = "no total" | "null total" | "huge total" | "bare array";

function pageOf(shape: Shape, data: unknown[]): unknown {
  if (shape === "bare array") return data;
  if (shape === "null total") return { data, total: null };
  return shape === "huge total" ? { data, total: 3_000_000_000 } : { data };
}

/** Serves the campaign's leads pages in `shape`, at most `cap` records a page whatever the limit. */
function dropTotals(h: ScriptedCampaign, shape: Shape, cap = Number.POSITIVE_INFINITY): void {
  h.upstream.hook = ({ path, query }) => {
    if (path !== LEADS) return undefined;
    const offset = Number(query.get("offset"));
    const data = (h.upstream.state.leads.get(CAMPAIGN) ?? []).slice(offset, offset + Math.min(Number(query.get("limit")), cap));
    return { status: 200, body: pageOf(shape, data) };
  };
}

async function live(h: ScriptedCampaign, table: "leads" | "schedules"): Promise<number> {
  return (await h.warehouse.db.selectFrom(table).select("_deleted_at").where("_deleted_at", "is", null).execute()).length;
}

async function leadLive(h: ScriptedCampaign, uid: string): Promise<boolean> {
  return (await h.warehouse.db.selectFrom("leads").select("_deleted_at").where("uid", "=", uid).executeTakeFirstOrThrow())._deleted_at === null;
}

function unlist(h: ScriptedCampaign, uid: string): void {
  h.upstream.state.leads.set(CAMPAIGN, (h.upstream.state.leads.get(CAMPAIGN) as Lead[]).filter((lead) => lead.uid !== uid));
}

describe.each<Shape>(["no total", "null total", "huge total", "bare array"])("a leads listing with %s", (shape) => {
  it("lands every lead and schedule, succeeds, and names the deviation on the run, warning once", async () => {
    const h = await scripted({ status: "running", leads: 250 });
    dropTotals(h, shape);
    const { logger, lines } = memoryLogger();
    const summary = await runCampaignSync(h.context({ logger }), CAMPAIGN);
    expect(summary.failures).toEqual([]);
    expect(summary.outcome).toBe("succeeded");
    expect(await live(h, "leads")).toBe(250);
    expect(await live(h, "schedules")).toBe(250);
    // Three pages of records and the empty one that ends the walk.
    expect(summary.fieldIssues).toEqual({ "leads.total": 4 });
    const row = await h.warehouse.db.selectFrom("sync_runs").select("field_issues").where("id", "=", summary.runId).executeTakeFirstOrThrow();
    expect(row.field_issues).toEqual({ "leads.total": 4 });
    expect(lines.filter((line) => line.includes(UNKNOWN_TOTAL))).toHaveLength(1);
    const checkpoint = await loadCheckpoint(h.warehouse.db, KEY);
    expect(checkpoint).toMatchObject({ upstreamTotal: null, cursorOffset: 0, scanStartedAt: null, state: { missing: [] } });
    expect(checkpoint.lastCompleteScanAt).not.toBeNull();
    expect(checkpoint.state.provenAt).toBeUndefined();
  });
});

describe("a walk without a total", () => {
  it("is not ended by a short page: an upstream that caps its pages still gives every lead", async () => {
    const h = await scripted({ status: "running", leads: 130 });
    dropTotals(h, "no total", 30);
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    expect(await live(h, "leads")).toBe(130);
  });

  it("soft-deletes a lead gone upstream only after the second walk that does not see it, once its lookup confirms it", async () => {
    const h = await scripted({ status: "running", leads: 40 });
    dropTotals(h, "no total");
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    unlist(h, "L5");
    h.requested();
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    // The first walk without L5 cannot tell it is gone rather than missed: it only remembers it.
    expect(h.requested()).not.toContain(LOOKUP);
    expect(await leadLive(h, "L5")).toBe(true);
    expect((await loadCheckpoint(h.warehouse.db, KEY)).state.missing).toEqual(["leads:L5", "schedules:1005"]);
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    // Its 404 is asked once more before it stands.
    expect(h.requested().filter((path) => path === LOOKUP)).toHaveLength(2);
    expect(await leadLive(h, "L5")).toBe(false);
    expect(await live(h, "leads")).toBe(39);
    expect(await live(h, "schedules")).toBe(39);
    expect((await loadCheckpoint(h.warehouse.db, KEY)).state.missing).toEqual([]);
  });

  it("takes a lead's schedules with it when a later lookup confirms it gone, though the walk before kept them for a failed lookup", async () => {
    const h = await scripted({ status: "running", leads: 40 });
    dropTotals(h, "no total");
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    unlist(h, "L5");
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    // The second walk without L5 asks about it, and the lookup fails: L5 and its schedule stay live.
    const leadsHook = h.upstream.hook;
    h.upstream.hook = (request) => (request.path === LOOKUP ? { status: 503, body: { message: "unavailable" } } : leadsHook?.(request));
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("partial");
    expect(await leadLive(h, "L5")).toBe(true);
    // The third walk's lookup confirms L5 gone: it goes, and its schedule with it.
    h.upstream.hook = leadsHook;
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    expect(await leadLive(h, "L5")).toBe(false);
    const schedule = await h.warehouse.db.selectFrom("schedules").select("_deleted_at").where("id", "=", 1005).executeTakeFirstOrThrow();
    expect(schedule._deleted_at).toBeInstanceOf(Date);
    expect(await live(h, "schedules")).toBe(39);
  });

  it("keeps a lead one walk missed and the next saw again", async () => {
    const h = await scripted({ status: "running", leads: 40 });
    dropTotals(h, "no total");
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    const listed = h.upstream.state.leads.get(CAMPAIGN) as Lead[];
    unlist(h, "L5");
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    h.upstream.state.leads.set(CAMPAIGN, listed);
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    unlist(h, "L5");
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    expect(await leadLive(h, "L5")).toBe(true);
    expect(await live(h, "leads")).toBe(40);
  });

  it("leaves what a previous such walk remembered to a proven walk once totals come back", async () => {
    const h = await scripted({ status: "running", leads: 40 });
    dropTotals(h, "no total");
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    unlist(h, "L5");
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    h.upstream.hook = undefined;
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    expect(await leadLive(h, "L5")).toBe(false);
    const { state } = await loadCheckpoint(h.warehouse.db, KEY);
    expect(state.missing).toBeUndefined();
    expect(state.provenAt).toBeDefined();
  });

  it("is not a terminal campaign's final walk: its leads are walked again", async () => {
    const h = await scripted({ status: "complete", leads: 20 });
    dropTotals(h, "no total");
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    expect(isFinalLeadsWalk(await loadCheckpoint(h.warehouse.db, KEY))).toBe(false);
    h.requested();
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    expect(h.requested()).toContain(LEADS);
  });

  it("judges rows keyed by an instant to the microsecond: an open gone upstream goes after two walks", async () => {
    const h = await scripted({ status: "running", leads: 3, sentOn: "2026-05-01T09:00:00.000Z" });
    const opens = [1001, 1002, 1003].map((scheduleId, index) => ({ schedule_id: scheduleId, opened_on: `2026-05-01T10:00:0${index}.12345${index}Z` }));
    h.upstream.state.opens.set(CAMPAIGN, opens);
    h.upstream.hook = ({ path, query }) => {
      if (path !== PATHS.emailOpenEvents) return undefined;
      const offset = Number(query.get("offset"));
      return { status: 200, body: (h.upstream.state.opens.get(CAMPAIGN) ?? []).slice(offset, offset + Number(query.get("limit"))) };
    };
    const liveOpens = async () => (await h.warehouse.db.selectFrom("email_opens").select("schedule_id").where("_deleted_at", "is", null).execute()).map((row) => Number(row.schedule_id));
    const summary = await runCampaignSync(h.context(), CAMPAIGN);
    expect(summary.outcome).toBe("succeeded");
    expect(summary.fieldIssues).toEqual({ "email_opens.total": 2 });
    h.upstream.state.opens.set(CAMPAIGN, opens.slice(1));
    expect((await runCampaignSync(h.context(), CAMPAIGN, "events")).outcome).toBe("succeeded");
    expect((await liveOpens()).sort()).toEqual([1001, 1002, 1003]);
    const { state } = await loadCheckpoint(h.warehouse.db, { ...KEY, stream: "email_opens" });
    expect(state.missing).toEqual(["email_opens:1001|2026-05-01T10:00:00.123450Z"]);
    expect((await runCampaignSync(h.context(), CAMPAIGN, "events")).outcome).toBe("succeeded");
    expect((await liveOpens()).sort()).toEqual([1002, 1003]);
  });

  it("still fails a leads answer that holds no array of records, keeping what the warehouse had", async () => {
    const h = await scripted({ status: "running", leads: 20 });
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    h.upstream.hook = ({ path }) => (path === LEADS ? { status: 200, body: { leads: [], total: 20 } } : undefined);
    const summary = await runCampaignSync(h.context(), CAMPAIGN, "leads");
    expect(summary.outcome).toBe("partial");
    expect(summary.failures.map((failure) => `${failure.stream}: ${failure.error.message}`)).toEqual([
      expect.stringMatching(/^leads: .*protocol error: expected a JSON array or a \{data: array, total: integer\} envelope/),
    ]);
    expect(await live(h, "leads")).toBe(20);
  });
});
