import { describe, expect, it } from "vitest";
import { runCampaignSync } from "../../src/sync/runs.ts";
import type { Lead } from "../../src/upstream/resources.ts";
import { useTestDatabase } from "../support/database.ts";
import { replyArrives, useScriptedCampaigns, type ScriptedCampaign } from "../support/scripted-campaign.ts";
import type { ScriptedHook } from "../support/scripted-upstream.ts";

/** What may undo a deletion or fake one: a read made before it and committed after, across the rhythms and discovery; a 404 from an upstream that answers nothing else. */

const databaseUrl = useTestDatabase("stale_reads_after_deletions");
const CAMPAIGN = "cmp_stale_reads";
const scripted = useScriptedCampaigns(databaseUrl, CAMPAIGN);

async function harness(leads = 3): Promise<ScriptedCampaign> {
  const made = await scripted({ status: "running", leads, sentOn: "2026-05-01T10:00:00.000Z" });
  return { ...made, context: (overrides = {}) => made.context({ trigger: "worker", locks: made.warehouse.locks, ...overrides }) };
}

/** A gate: requests `matching` wait until release() and are then answered with `answer()`. */
function gate(matching: (path: string, query: URLSearchParams) => boolean, answer: () => { status: number; body: unknown }) {
  let arrived: () => void = () => undefined;
  const reached = new Promise<void>((resolve) => (arrived = resolve));
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  const hook: ScriptedHook = async ({ path, query }) => {
    if (!matching(path, query)) return undefined;
    arrived();
    await released;
    return answer();
  };
  return { hook, reached, release };
}

const deletedAt = async (h: ScriptedCampaign, table: "leads" | "schedules" | "contacts", column: string, value: string | number) =>
  (await h.warehouse.db.selectFrom(table).select("_deleted_at").where(column as never, "=", value as never).executeTakeFirstOrThrow())._deleted_at;

describe("a deletion the warehouse recorded from a newer read", () => {
  it("is not undone by a leads page requested before the refresh that found the lead gone, and written after it", async () => {
    const h = await harness(3);
    await runCampaignSync(h.context(), CAMPAIGN, "all");
    // The leads walk requests its page now (L2 still listed) and writes it only after the events cycle.
    const stalePage = JSON.parse(JSON.stringify({ data: h.upstream.state.leads.get(CAMPAIGN), total: 3 })) as unknown;
    const walkGate = gate((path) => path === "/api/v1/leads/", () => ({ status: 200, body: stalePage }));
    h.upstream.hook = walkGate.hook;
    const walk = runCampaignSync(h.context(), CAMPAIGN, "leads");
    await walkGate.reached;

    // Meanwhile L2 gets a reply and is then deleted upstream: the events cycle refreshes L2, which answers 404 twice.
    replyArrives(h, CAMPAIGN, 1, 7003);
    const leads = h.upstream.state.leads.get(CAMPAIGN) as Lead[];
    h.upstream.state.leads.set(CAMPAIGN, leads.filter((lead) => lead.uid !== "L2"));
    expect((await runCampaignSync(h.context(), CAMPAIGN, "events")).outcome).toBe("succeeded");
    const deletedByRefresh = await deletedAt(h, "leads", "uid", "L2");
    expect(deletedByRefresh).not.toBeNull();

    walkGate.release();
    expect((await walk).outcome).toBe("succeeded");
    // The page's read of L2 is older than the 404s that deleted it: L2, its schedule and its contact stay gone.
    expect({
      lead: await deletedAt(h, "leads", "uid", "L2"),
      schedule: await deletedAt(h, "schedules", "id", 1002),
      contact: await deletedAt(h, "contacts", "id", 1_001_002),
    }).toEqual({ lead: deletedByRefresh, schedule: deletedByRefresh, contact: deletedByRefresh });
  });

  it("is not undone by a lead refresh requested before the leads walk that found its schedule gone, and written after it", async () => {
    const h = await harness(3);
    // L1 has a second schedule, 1101.
    const l1 = (h.upstream.state.leads.get(CAMPAIGN) as Lead[])[0] as Lead;
    l1.schedules.push({ ...(JSON.parse(JSON.stringify(l1.schedules[0])) as Lead["schedules"][number]), id: 1101 });
    await runCampaignSync(h.context(), CAMPAIGN, "all");
    expect(await deletedAt(h, "schedules", "id", 1101)).toBeNull();

    // A reply arrives on L1: the events cycle refreshes L1; that lookup is requested now and answered late.
    replyArrives(h, CAMPAIGN, 0, 7201);
    const staleLead = JSON.parse(JSON.stringify(l1)) as unknown;
    const refreshGate = gate((path) => path === "/api/v1/lead/", () => ({ status: 200, body: staleLead }));
    h.upstream.hook = refreshGate.hook;
    const events = runCampaignSync(h.context(), CAMPAIGN, "events");
    await refreshGate.reached;

    // Schedule 1101 is removed upstream; the leads walk, started after the refresh was requested, deletes it.
    l1.schedules = l1.schedules.filter((schedule) => schedule.id !== 1101);
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    const deletedByWalk = await deletedAt(h, "schedules", "id", 1101);
    expect(deletedByWalk).not.toBeNull();

    refreshGate.release();
    expect((await events).outcome).toBe("succeeded");
    expect(await deletedAt(h, "schedules", "id", 1101)).toEqual(deletedByWalk);
  });
});

describe("a campaign the leads rhythm found gone (#2 answered 404 twice)", () => {
  it("is not brought back by a discovery listing page requested before the 404s and written after them", async () => {
    const h = await harness(2);
    const ctx = () => h.context();
    expect((await runCampaignSync(ctx(), CAMPAIGN, "all")).outcome).toBe("succeeded");
    const { runDiscovery } = await import("../../src/sync/runs.ts");
    expect((await runDiscovery(ctx())).outcome).toBe("succeeded");
    // Discovery asks for the campaign listing now; the answer (the campaign still listed) is slow to arrive.
    const listed = h.upstream.state.campaigns.map((campaign) => ({ uid: campaign.uid, name: campaign.settings.name, workspace_id: 1, created_on: campaign.created_on, status: campaign.status }));
    const listingGate = gate((path) => path === "/api/v1/campaigns/", () => ({ status: 200, body: { data: listed, total: listed.length } }));
    h.upstream.hook = listingGate.hook;
    const discovery = runDiscovery(ctx());
    await listingGate.reached;
    // The campaign is deleted upstream; its leads rhythm asks for its detail, gets 404 twice, and deletes it.
    h.upstream.state.campaigns.splice(0);
    h.upstream.state.leads.delete(CAMPAIGN);
    await runCampaignSync(ctx(), CAMPAIGN, "leads");
    const deleted = (await h.warehouse.db.selectFrom("campaigns").select("_deleted_at").where("uid", "=", CAMPAIGN).executeTakeFirstOrThrow())._deleted_at;
    expect(deleted).toBeInstanceOf(Date);

    listingGate.release();
    const discovered = (await discovery).campaigns.map((campaign) => campaign.uid);
    const campaign = await h.warehouse.db.selectFrom("campaigns").select("_deleted_at").where("uid", "=", CAMPAIGN).executeTakeFirstOrThrow();
    expect({ deletedAt: campaign._deleted_at, discovered }).toEqual({ deletedAt: deleted, discovered: [] });
  });
});

describe("a 404 from an upstream that answers nothing else", () => {
  it("deletes no campaign while even the workspace listing fails (a wrong COLDSYNC_API_URL, a front answering 404 to all)", async () => {
    const h = await harness(2);
    await runCampaignSync(h.context(), CAMPAIGN, "all");
    h.upstream.hook = () => ({ status: 404, body: { message: "Not Found" } });
    h.requested();

    const run = await runCampaignSync(h.context(), CAMPAIGN, "all");

    expect(run.outcome).toBe("failed");
    expect(run.failures.map((failure) => failure.error.message)).toContainEqual(expect.stringMatching(/a 404 proves no deletion while the upstream answers nothing/));
    expect(h.requested()).toContain("/api/v1/workspaces/");
    const live = await h.warehouse.db.selectFrom("campaigns").select("_deleted_at").executeTakeFirstOrThrow();
    expect(live._deleted_at).toBeNull();
    expect(await h.warehouse.db.selectFrom("leads").select("uid").where("_deleted_at", "is", null).execute()).toHaveLength(2);

    // A campaign really gone, in a run that met no success before: the workspace listing answers, and the 404 stands.
    h.upstream.hook = (request) => (request.path === "/api/v1/workspaces/" ? undefined : { status: 404, body: { message: "Not Found" } });
    expect((await runCampaignSync(h.context(), CAMPAIGN, "all")).outcome).toBe("succeeded");
    expect((await h.warehouse.db.selectFrom("campaigns").select("_deleted_at").executeTakeFirstOrThrow())._deleted_at).not.toBeNull();
  });
});
