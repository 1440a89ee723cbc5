import { afterEach, describe, expect, it } from "vitest";
import { runCampaignSync, runDiscovery, runFullSync } from "../../src/sync/runs.ts";
import { campaignLag } from "../../src/sync/status.ts";
import { verify } from "../../src/sync/verify.ts";
import { UpstreamClient } from "../../src/upstream/client.ts";
import type { Campaign, Lead } from "../../src/upstream/resources.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns, type ScriptedCampaign } from "../support/scripted-campaign.ts";
import { buildCampaign } from "../support/scripted-upstream.ts";

/**
 * A proven walk of the campaigns listing soft-deletes a campaign it did not see (and with it every lead,
 * schedule and event it holds) only once the campaign's detail (#2) answers 404.
 */

const databaseUrl = useTestDatabase("confirmed_campaign_deletes");
const MAIN = "cmp_main";
const scripted = useScriptedCampaigns(databaseUrl, MAIN);
const LISTING = "/api/v1/campaigns/";
const DETAIL = "/api/v1/campaign/";
const clients: UpstreamClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
});

/**
 * Twelve campaigns listed five to a page, MAIN seventh (on the second page), MAIN synced with its three leads.
 * Returns the context discoveries run with.
 */
async function twelveCampaigns(h: ScriptedCampaign) {
  const others = Array.from({ length: 11 }, (_, index) => buildCampaign(`cmp_${String(index + 1).padStart(2, "0")}`, "running"));
  h.upstream.state.campaigns.splice(0, 1, ...others.slice(0, 6), h.upstream.state.campaigns[0] as Campaign, ...others.slice(6));
  const client = new UpstreamClient({ baseUrl: h.upstream.url, apiKey: "k", requestsPerSecond: 5_000, maxRetries: 1, retryBaseMs: 1, retryCapMs: 5, timeoutMs: 5_000, pageSize: 5 });
  clients.push(client);
  const context = h.context({ client });
  expect((await runDiscovery(context)).outcome).toBe("succeeded");
  expect((await runCampaignSync(context, MAIN)).outcome).toBe("succeeded");
  return context;
}

async function liveCampaigns(h: ScriptedCampaign): Promise<string[]> {
  const rows = await h.warehouse.db.selectFrom("campaigns").select("uid").where("_deleted_at", "is", null).orderBy("uid").execute();
  return rows.map((row) => row.uid);
}

async function liveLeadsOf(h: ScriptedCampaign, campaignUid: string): Promise<number> {
  const rows = await h.warehouse.db.selectFrom("leads").select("uid").where("campaign_uid", "=", campaignUid).where("_deleted_at", "is", null).execute();
  return rows.length;
}

const detailLookups = (h: ScriptedCampaign) => h.requested().filter((path) => path === DETAIL).length;

describe("a campaign that moved behind the cursor while one already read went", () => {
  it("stays live with its leads, written from its detail, and the one that went is soft-deleted by the next discovery", async () => {
    const h = await scripted({ status: "running", leads: 3 });
    const context = await twelveCampaigns(h);
    const listed = h.upstream.state.campaigns;
    let done = false;
    h.upstream.hook = ({ path, query }) => {
      if (!done && path === LISTING && Number(query.get("offset")) > 0) {
        done = true;
        const [moved] = listed.splice(6, 1); // MAIN moves to the front, renamed on the way
        listed.unshift({ ...(moved as Campaign), settings: { ...(moved as Campaign).settings, name: "Renamed" } });
        listed.splice(2, 1); // and cmp_02 (read on the first page) goes: the total and every later position stay put
      }
      return undefined;
    };
    h.requested();
    const moved = await runDiscovery(context);
    expect(moved.outcome).toBe("succeeded");
    expect(moved.campaigns.map((campaign) => campaign.uid)).toContain(MAIN);
    expect(detailLookups(h)).toBe(1);
    expect(await liveLeadsOf(h, MAIN)).toBe(3);
    const row = await h.warehouse.db.selectFrom("campaigns").select("name").where("uid", "=", MAIN).executeTakeFirstOrThrow();
    expect(row.name).toBe("Renamed");
    expect(moved.fieldIssues).toEqual({ "campaigns.listing": 1 });

    h.upstream.hook = undefined;
    expect((await runDiscovery(context)).outcome).toBe("succeeded");
    expect(await liveCampaigns(h)).not.toContain("cmp_02");
    expect(await liveCampaigns(h)).toContain(MAIN);
  });

  it("is soft-deleted with its leads once its detail answers 404 twice, two lookups for it", async () => {
    const h = await scripted({ status: "running", leads: 3 });
    const context = await twelveCampaigns(h);
    h.upstream.state.campaigns.splice(6, 1);
    h.requested();
    expect((await runDiscovery(context)).outcome).toBe("succeeded");
    expect(detailLookups(h)).toBe(2);
    expect(await liveCampaigns(h)).not.toContain(MAIN);
    expect(await liveLeadsOf(h, MAIN)).toBe(0);
    // Its sending domains went with it, yet its settings did not change: the last version stays open, domains and all.
    const history = await h.warehouse.db.selectFrom("campaign_history").select(["settings", "valid_to"]).where("campaign_uid", "=", MAIN).orderBy("valid_from", "desc").execute();
    expect(history[0]).toEqual({ settings: expect.objectContaining({ sending_domains: [1] }), valid_to: null });
  });

  it("stays live, its name kept, when its detail answers with settings that cannot be read", async () => {
    const h = await scripted({ status: "running", leads: 3 });
    const context = await twelveCampaigns(h);
    const [main] = h.upstream.state.campaigns.splice(6, 1) as Campaign[];
    h.upstream.hook = ({ path }) => (path === DETAIL ? { status: 200, body: { ...main, status: "paused", settings: null } } : undefined);
    const found = await runDiscovery(context);
    expect(found.outcome).toBe("succeeded");
    expect(found.fieldIssues).toEqual({ "campaigns.listing": 1, "campaigns.name": 1 });
    const row = await h.warehouse.db.selectFrom("campaigns").select(["name", "status", "_deleted_at"]).where("uid", "=", MAIN).executeTakeFirstOrThrow();
    expect(row).toEqual({ name: `Campaign ${MAIN}`, status: "paused", _deleted_at: null });
    expect(await liveLeadsOf(h, MAIN)).toBe(3);
  });

  it("is written from its detail as its list item would show it: only those fields, what could not be read kept, the detail's columns left alone", async () => {
    const h = await scripted({ status: "running", leads: 1 });
    const context = await twelveCampaigns(h);
    const [main] = h.upstream.state.campaigns.splice(6, 1) as Campaign[];
    const before = await h.warehouse.db.selectFrom("campaigns").selectAll().where("uid", "=", MAIN).executeTakeFirstOrThrow();
    h.upstream.hook = ({ path }) =>
      path === DETAIL
        ? { status: 200, body: { ...main, status: true, created_on: "yesterday", bounces: -1, daily: 1, settings: { ...main?.settings, name: "Renamed", daily_email_limit: "x", sending_domains: "?" } } }
        : undefined;
    const found = await runDiscovery(context);
    expect(found.outcome).toBe("succeeded");
    expect(found.fieldIssues).toEqual({ "campaigns.listing": 1, "campaigns.status": 1, "campaigns.created_on": 1 });
    const row = await h.warehouse.db.selectFrom("campaigns").selectAll().where("uid", "=", MAIN).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ name: "Renamed", status: before.status, created_on: before.created_on, bounces: before.bounces, daily_email_limit: before.daily_email_limit, _deleted_at: null });
    expect(Object.keys((row._field_issues as Record<string, unknown>).campaigns as object).sort()).toEqual(["created_on", "status"]);
    // The sending domains are the detail stream's to judge: untouched.
    const domains = await h.warehouse.db.selectFrom("campaign_sending_domains").select("domain_id").where("campaign_uid", "=", MAIN).where("_deleted_at", "is", null).execute();
    expect(domains).toEqual([{ domain_id: 1 }]);
  });

  it("asks about every campaign the walk did not see, however many: none goes on a sample's word", async () => {
    const h = await scripted({ status: "running", leads: 2 });
    const context = await twelveCampaigns(h);
    const extra = Array.from({ length: 20 }, (_, index) => buildCampaign(`cmp_x${String(index).padStart(2, "0")}`, "running"));
    h.upstream.state.campaigns.push(...extra);
    expect((await runDiscovery(context)).outcome).toBe("succeeded");
    // Twenty of them and MAIN leave the listing; MAIN alone still answers its detail.
    const [main] = h.upstream.state.campaigns.splice(6, 1) as Campaign[];
    h.upstream.state.campaigns.splice(-extra.length);
    h.upstream.hook = ({ path, query }) => (path === DETAIL && query.get("campaign_uid") === MAIN ? { status: 200, body: main } : undefined);
    h.requested();
    expect((await runDiscovery(context)).outcome).toBe("succeeded");
    // Each of the twenty gone is asked twice (a 404 is asked once more), MAIN once.
    expect(detailLookups(h)).toBe(2 * extra.length + 1);
    const live = await liveCampaigns(h);
    expect(live).toContain(MAIN);
    expect(live.filter((uid) => uid.startsWith("cmp_x"))).toEqual([]);
    expect(await liveLeadsOf(h, MAIN)).toBe(2);
  });

  it("stays live with its leads when its lookup fails, the discovery partial, and goes with the next one", async () => {
    const h = await scripted({ status: "running", leads: 3 });
    const context = await twelveCampaigns(h);
    h.upstream.state.campaigns.splice(6, 1);
    h.upstream.hook = ({ path }) => (path === DETAIL ? { status: 503, body: { message: "unavailable" } } : undefined);
    const failed = await runDiscovery(context);
    expect(failed.outcome).toBe("partial");
    expect(failed.failures.map((failure) => failure.error.name)).toEqual(["UnconfirmedMissingError"]);
    expect(await liveCampaigns(h)).toContain(MAIN);
    expect(await liveLeadsOf(h, MAIN)).toBe(3);
    h.upstream.hook = undefined;
    expect((await runDiscovery(context)).outcome).toBe("succeeded");
    expect(await liveCampaigns(h)).not.toContain(MAIN);
  });
});

describe("a campaign deleted upstream that held records set aside", () => {
  it("resolves them with it, since the upstream no longer has them either: verify stops naming them", async () => {
    const h = await scripted({ status: "running", leads: 3 });
    const [first] = h.upstream.state.leads.get(MAIN) as Lead[];
    (first as { uid: string }).uid = "";
    expect((await runFullSync(h.context())).outcome).toBe("partial");
    const rejected = () => h.warehouse.db.selectFrom("rejected_records").select("resolved_at").where("campaign_uid", "=", MAIN).execute();
    expect(await rejected()).toEqual([{ resolved_at: null }]);
    h.upstream.state.campaigns.splice(0);
    h.upstream.state.leads.delete(MAIN);
    expect((await runDiscovery(h.context())).outcome).toBe("succeeded");
    expect(await rejected()).toEqual([{ resolved_at: expect.any(Date) }]);
    expect((await verify(h.context())).lines.filter((line) => line.status === "rejected")).toEqual([]);
  });
});

describe("a campaign deleted upstream and then listed again, unchanged", () => {
  it("records no history version: neither its deletion nor its return changed its settings", async () => {
    const h = await scripted({ status: "running", leads: 2 });
    const context = await twelveCampaigns(h);
    const history = () => h.warehouse.db.selectFrom("campaign_history").select(["settings", "valid_to"]).where("campaign_uid", "=", MAIN).orderBy("valid_from").execute();
    const before = await history();
    expect(before.at(-1)).toEqual({ settings: expect.objectContaining({ sending_domains: [1] }), valid_to: null });

    const [main] = h.upstream.state.campaigns.splice(6, 1) as Campaign[];
    expect((await runDiscovery(context)).outcome).toBe("succeeded");
    expect(await liveCampaigns(h)).not.toContain(MAIN);
    h.upstream.state.campaigns.push(main as Campaign);
    expect((await runDiscovery(context)).outcome).toBe("succeeded");
    expect(await liveCampaigns(h)).toContain(MAIN);
    expect(await history()).toEqual(before);

    // Its next sync reads its detail and brings its domains back: still no change to record.
    expect((await runCampaignSync(context, MAIN)).outcome).toBe("succeeded");
    expect(await history()).toEqual(before);
  });
});

describe("a campaign listing without totals", () => {
  const isLive = async (h: ScriptedCampaign, uid: string) =>
    (await h.warehouse.db.selectFrom("campaigns").select("_deleted_at").where("uid", "=", uid).executeTakeFirstOrThrow())._deleted_at === null;

  it("asks for a campaign only once two walks in a row left it out: keeps it when its detail answers, deletes one whose detail is 404", async () => {
    const h = await scripted({ status: "running", leads: 2 });
    h.upstream.state.campaigns.push(buildCampaign("cmp_other", "running"));
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    const hidden = new Set([MAIN, "cmp_other"]);
    h.upstream.hook = ({ path, query }) => {
      if (path !== LISTING) return undefined;
      const offset = Number(query.get("offset") ?? 0);
      const limit = Number(query.get("limit") ?? 10);
      const listed = h.upstream.state.campaigns.filter((campaign) => !hidden.has(campaign.uid));
      const data = listed.slice(offset, offset + limit).map((c) => ({ uid: c.uid, name: c.settings.name, workspace_id: 1, created_on: c.created_on, status: c.status }));
      return { status: 200, body: { data } };
    };
    // cmp_other is gone for #2 too; MAIN is only left out of the listing.
    h.upstream.state.campaigns.splice(h.upstream.state.campaigns.findIndex((c) => c.uid === "cmp_other"), 1);

    h.requested();
    expect((await runDiscovery(h.context())).outcome).toBe("succeeded");
    expect(detailLookups(h)).toBe(0);
    expect(await isLive(h, MAIN)).toBe(true);
    expect(await isLive(h, "cmp_other")).toBe(true);

    expect((await runDiscovery(h.context())).outcome).toBe("succeeded");
    // MAIN once, cmp_other twice (its 404 is asked once more).
    expect(detailLookups(h)).toBe(3);
    expect(await isLive(h, MAIN)).toBe(true);
    expect(await liveLeadsOf(h, MAIN)).toBe(2);
    expect(await isLive(h, "cmp_other")).toBe(false);

    // Found by its lookup, it counts as seen: the next walk only remembers it, the one after asks again.
    expect((await runDiscovery(h.context())).outcome).toBe("succeeded");
    expect(detailLookups(h)).toBe(0);
    expect((await runDiscovery(h.context())).outcome).toBe("succeeded");
    expect(detailLookups(h)).toBe(1);
    expect(await isLive(h, MAIN)).toBe(true);
  });
});

describe("a terminal campaign past its final walks", () => {
  /** MAIN complete, its three leads sent, synced until its final walks are done: its leads are walked no more. */
  async function pastFinalWalks(): Promise<ScriptedCampaign> {
    const h = await scripted({ status: "complete", leads: 3, sentOn: "2026-05-01T10:00:00.000Z" });
    for (let cycle = 0; cycle < 2; cycle += 1) expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    h.requested();
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    expect(h.requested()).not.toContain("/api/v1/leads/");
    return h;
  }

  it("gets its leads back when it is deleted upstream and comes back: its deletion forgets the walks it had", async () => {
    const h = await pastFinalWalks();
    const [main] = h.upstream.state.campaigns.splice(0) as Campaign[];
    const listings = new Set([DETAIL, "/api/v1/leads/", "/api/v1/replies/", "/api/v1/campaign/link-click-events/", "/api/v1/campaign/email-open-events/"]);
    h.upstream.hook = ({ path }) => (listings.has(path) && h.upstream.state.campaigns.length === 0 ? { status: 404, body: { message: "campaign_uid: no such campaign" } } : undefined);
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    expect(await liveLeadsOf(h, MAIN)).toBe(0);

    h.upstream.state.campaigns.push(main as Campaign);
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    expect(await liveLeadsOf(h, MAIN)).toBe(3);
    expect((await verify(h.context())).problems).toBe(0);
  });

  it("is not deleted on one 404 of its detail: a lookup's 404 is asked once more before the record is taken as gone", async () => {
    const h = await pastFinalWalks();
    let glitches = 1;
    h.upstream.hook = ({ path }) => (path === DETAIL && glitches-- > 0 ? { status: 404, body: { message: "campaign_uid: no such campaign" } } : undefined);
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    expect(h.requested().filter((path) => path === DETAIL)).toHaveLength(2);
    expect(await liveCampaigns(h)).toEqual([MAIN]);
    expect(await liveLeadsOf(h, MAIN)).toBe(3);
  });
});

describe("a campaign deleted while its final leads walk is in flight", () => {
  it("gets its leads back when it comes back: the walk's late page does not re-create the checkpoints its deletion forgot", async () => {
    const h = await scripted({ status: "complete", leads: 3, sentOn: "2026-05-01T10:00:00.000Z" });
    // First final walk.
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    // Second final walk: while its leads page is in flight, the campaign goes upstream and discovery deletes it
    // (its detail answers 404 twice); the campaign is restored at once, and the page is answered and lands late.
    let armed = true;
    h.upstream.hook = async ({ path }) => {
      if (!armed || path !== "/api/v1/leads/") return undefined;
      armed = false;
      const [main] = h.upstream.state.campaigns.splice(0) as Campaign[];
      expect((await runDiscovery(h.context())).outcome).toBe("succeeded");
      const deleted = await h.warehouse.db.selectFrom("campaigns").select("_deleted_at").where("uid", "=", MAIN).executeTakeFirstOrThrow();
      expect(deleted._deleted_at).not.toBeNull();
      h.upstream.state.campaigns.push(main as Campaign);
      return undefined;
    };
    await runCampaignSync(h.context(), MAIN, "leads");
    h.upstream.hook = undefined;
    expect(await liveLeadsOf(h, MAIN)).toBe(0);

    // The campaign is back: the next cycles must walk its leads again, as for a deletion at any other moment.
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    expect(await liveLeadsOf(h, MAIN)).toBe(3);
  });

  it("gets its leads back when it comes back: the walk's completion, saved after the deletion, does not record the final walk", async () => {
    const h = await scripted({ status: "complete", leads: 3, sentOn: "2026-05-01T10:00:00.000Z" });
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    // L3 goes upstream: the second final walk looks it up before its completion; meanwhile the campaign goes
    // upstream and discovery deletes it, and the campaign is restored at once.
    const listed = h.upstream.state.leads.get(MAIN) ?? [];
    listed.splice(2, 1);
    let armed = true;
    h.upstream.hook = async ({ path }) => {
      if (!armed || path !== "/api/v1/lead/") return undefined;
      armed = false;
      const [main] = h.upstream.state.campaigns.splice(0) as Campaign[];
      expect((await runDiscovery(h.context())).outcome).toBe("succeeded");
      h.upstream.state.campaigns.push(main as Campaign);
      return undefined;
    };
    await runCampaignSync(h.context(), MAIN, "leads");
    h.upstream.hook = undefined;
    expect(armed).toBe(false);
    expect(await liveLeadsOf(h, MAIN)).toBe(0);

    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    expect(await liveLeadsOf(h, MAIN)).toBe(2);
  });
});

describe("one stray 404 of a campaign's detail", () => {
  it("does not delete the campaign and its leads when discovery's confirmation of a campaign its listing missed gets it: the 404 is asked once more, as a lookup's is", async () => {
    const h = await scripted({ status: "running", leads: 3, sentOn: "2026-05-01T10:00:00.000Z" });
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    // The listing misses MAIN once (it moved behind the cursor, a replica behind), and its detail answers one stray 404.
    let listingGlitch = 1;
    let detailGlitch = 1;
    h.upstream.hook = ({ path }) => {
      if (path === "/api/v1/campaigns/" && listingGlitch-- > 0) return { status: 200, body: { data: [], total: 0 } };
      if (path === "/api/v1/campaign/" && detailGlitch-- > 0) return { status: 404, body: { message: "campaign_uid: no such campaign" } };
      return undefined;
    };
    h.requested();
    await runDiscovery(h.context());
    h.upstream.hook = undefined;
    const detailAsks = h.requested().filter((path) => path === "/api/v1/campaign/").length;
    const row = await h.warehouse.db.selectFrom("campaigns").select("_deleted_at").where("uid", "=", MAIN).executeTakeFirstOrThrow();
    expect(row._deleted_at).toBeNull();
    expect(await liveLeadsOf(h, MAIN)).toBe(3);
    expect(detailAsks).toBe(2);
  });
});

describe("a terminal campaign's rewalk (COLDSYNC_TERMINAL_REWALK_EVERY)", () => {
  it("does not make the campaign look a week behind while the rewalk is in flight: its final walks are still done", async () => {
    const h = await scripted({ status: "complete", leads: 3, sentOn: "2026-05-01T10:00:00.000Z" });
    for (let cycle = 0; cycle < 3; cycle += 1) expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    const before = (await campaignLag(h.warehouse.db, "acme")).get(MAIN);
    expect(before?.finalWalksDone).toBe(true);
    // Its last walk was eight days ago: the rewalk is due.
    const eightDaysAgo = new Date(Date.now() - 8 * 86_400_000);
    await h.warehouse.db.updateTable("sync_checkpoints").set({ last_complete_scan_at: eightDaysAgo }).where("campaign_uid", "=", MAIN).where("stream", "=", "leads").execute();
    // The walk reads pages of two leads; its second page is held while the status is read.
    const client = new UpstreamClient({ baseUrl: h.upstream.url, apiKey: "k", requestsPerSecond: 5_000, maxRetries: 1, retryBaseMs: 1, retryCapMs: 5, timeoutMs: 5_000, pageSize: 2 });
    let reached: () => void = () => undefined;
    const atSecondPage = new Promise<void>((resolve) => (reached = resolve));
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    h.upstream.hook = async ({ path, query }) => {
      if (path !== "/api/v1/leads/" || Number(query.get("offset")) === 0) return undefined;
      reached();
      await released;
      return undefined;
    };
    const running = runCampaignSync(h.context({ client, terminalRewalkEveryMs: 7 * 86_400_000 }), MAIN, "leads");
    await atSecondPage;
    // Its first page is written (the checkpoint says a walk is under way).
    for (let tries = 0; tries < 100; tries += 1) {
      const row = await h.warehouse.db.selectFrom("sync_checkpoints").select("scan_started_at").where("campaign_uid", "=", MAIN).where("stream", "=", "leads").executeTakeFirst();
      if (row?.scan_started_at !== null && row?.scan_started_at !== undefined) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const during = (await campaignLag(h.warehouse.db, "acme")).get(MAIN);
    release();
    expect((await running).outcome).toBe("succeeded");
    await client.close();
    h.upstream.hook = undefined;
    expect(during?.lagSeconds).not.toBeNull();
    expect(during?.lagSeconds as number).toBeLessThan(3600);
  });
});
