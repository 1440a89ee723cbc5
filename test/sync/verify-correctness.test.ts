import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { runCampaignSync, runFullSync } from "../../src/sync/runs.ts";
import { verify } from "../../src/sync/verify.ts";
import type { Lead } from "../../src/upstream/resources.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";
import type { ScriptedUpstream } from "../support/scripted-upstream.ts";

/** `verify` against an upstream scripted request by request: what it reports must be what is there. */

const databaseUrl = useTestDatabase("verify_correctness");
const CAMPAIGN = "cmp_verified";
const scripted = useScriptedCampaigns(databaseUrl, CAMPAIGN);

const CAMPAIGN_PATHS = new Set(["/api/v1/campaign/", "/api/v1/leads/", "/api/v1/replies/", "/api/v1/campaign/link-click-events/", "/api/v1/campaign/email-open-events/"]);

/** As the real upstream does (contract A.2): a campaign it does not know answers 404 on every campaign path. */
function unknownCampaignsAnswer404(upstream: ScriptedUpstream): void {
  upstream.hook = ({ path, query }) =>
    CAMPAIGN_PATHS.has(path) && !upstream.state.campaigns.some((campaign) => campaign.uid === query.get("campaign_uid"))
      ? { status: 404, body: { message: "no such campaign" } }
      : undefined;
}

describe("verify", () => {
  it("reports a campaign the upstream deleted since the last sync as extra, instead of failing on its listings' 404", async () => {
    const h = await scripted({ status: "running", leads: 3 });
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    h.upstream.state.campaigns.splice(0);
    unknownCampaignsAnswer404(h.upstream);
    const result = await verify(h.context());
    expect(result.lines.find((line) => line.stream === "campaigns")).toMatchObject({ status: "extra", extraKeys: { count: 1, first: [CAMPAIGN] } });
    expect(result.lines.find((line) => line.campaignUid === CAMPAIGN && line.stream === "leads")).toMatchObject({ status: "extra", upstream: 0, warehouse: 3 });
  });

  it("reports a campaign it is asked about that neither the upstream nor the warehouse knows as unknown, not as all ok", async () => {
    const h = await scripted({ status: "running", leads: 3 });
    unknownCampaignsAnswer404(h.upstream);
    const typo = await verify(h.context(), { campaignUid: "cmp_typo" });
    expect(typo.lines).toEqual([expect.objectContaining({ campaignUid: "cmp_typo", status: "unknown", reason: expect.stringMatching(/^no such campaign/) })]);
    expect(typo.problems).toBe(1);
    // Once the warehouse held it, a campaign gone upstream holds nothing there, as the warehouse says.
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    h.upstream.state.campaigns.splice(0);
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    expect((await verify(h.context(), { campaignUid: CAMPAIGN })).problems).toBe(0);
  });

  it("compares the campaign's own row when asked about one campaign: held live after the upstream deleted it, or held deleted while the upstream has it", async () => {
    const h = await scripted({ status: "running", leads: 3 });
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    await sql`UPDATE campaigns SET _deleted_at = now() WHERE uid = ${CAMPAIGN}`.execute(h.warehouse.db);
    expect((await verify(h.context(), { campaignUid: CAMPAIGN })).lines[0]).toMatchObject({ stream: "campaigns", status: "missing", missingKeys: { first: [CAMPAIGN] } });
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    h.upstream.state.campaigns.splice(0);
    unknownCampaignsAnswer404(h.upstream);
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    // The sync deleted it and its leads; a bug revives the campaign's row, whose listings all answer 404.
    await sql`UPDATE campaigns SET _deleted_at = NULL WHERE uid = ${CAMPAIGN}`.execute(h.warehouse.db);
    for (const options of [{}, { deep: "all" as const }, { deep: "all" as const, values: true }]) {
      const result = await verify(h.context(), { campaignUid: CAMPAIGN, ...options });
      expect(result.lines[0], JSON.stringify(options)).toMatchObject({ stream: "campaigns", status: "extra", extraKeys: { first: [CAMPAIGN] } });
    }
  });

  it("names live rows under a campaign the warehouse holds as deleted, or does not hold at all, as extra", async () => {
    const h = await scripted({ status: "running", leads: 3 });
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    h.upstream.state.campaigns.splice(0);
    unknownCampaignsAnswer404(h.upstream);
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    expect((await verify(h.context())).problems).toBe(0);
    // Whatever wrote them: a lead of the deleted campaign live again, and one of a campaign never held.
    await sql`UPDATE leads SET _deleted_at = NULL WHERE uid = 'L2'`.execute(h.warehouse.db);
    await sql`INSERT INTO leads (uid, campaign_uid, _synced_at, _first_seen_at) VALUES ('L_ghost', 'cmp_nowhere', now(), now())`.execute(h.warehouse.db);
    const result = await verify(h.context());
    expect(result.lines.filter((line) => line.status !== "ok")).toMatchObject([
      { campaignUid: "cmp_nowhere", stream: "leads", status: "extra", upstream: 0, warehouse: 1, extraKeys: { count: 1, first: ["L_ghost"] } },
      { campaignUid: CAMPAIGN, stream: "leads", status: "extra", upstream: 0, warehouse: 1, extraKeys: { count: 1, first: ["L2"] } },
    ]);
  });

  it("names no lead as extra that the upstream still lists when a lead read before goes while the key sets are compared", async () => {
    const h = await scripted({ status: "running", leads: 150 });
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    const leads = h.upstream.state.leads.get(CAMPAIGN) as Lead[];
    let gone = false;
    h.upstream.hook = ({ path, query }) => {
      if (!gone && path === "/api/v1/leads/" && Number(query.get("offset")) > 0) {
        gone = true;
        leads.splice(4, 1); // L5, read on the first page, goes
      }
      return undefined;
    };
    const result = await verify(h.context(), { campaignUid: CAMPAIGN, deep: "all" });
    const line = result.lines.find((candidate) => candidate.stream === "leads");
    // L5 may still be taken for present (it was read before it went), but L101 is present on both sides.
    expect(line?.extraKeys?.first ?? []).not.toContain("L101");
    expect(line?.missingKeys?.count).toBe(0);
  });
});

describe("verify --deep", () => {
  it("names a schedule the warehouse wrongly holds as deleted, from the lead walk it already makes", async () => {
    const h = await scripted({ status: "running", leads: 3 });
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    expect((await verify(h.context(), { campaignUid: CAMPAIGN, deep: "all" })).problems).toBe(0);
    await h.warehouse.db.updateTable("schedules").set({ _deleted_at: new Date() }).where("id", "=", 1002).execute();
    const result = await verify(h.context(), { campaignUid: CAMPAIGN, deep: "all" });
    expect(result.lines.find((line) => line.stream === "schedules")).toMatchObject({ status: "missing", missingKeys: { count: 1, first: ["1002"] } });
  });

  it("walks the leads of a campaign the warehouse lacks once, naming them and their schedules by key", async () => {
    const h = await scripted({ status: "running", leads: 150 });
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    await h.warehouse.db.deleteFrom("campaigns").execute();
    await h.warehouse.db.deleteFrom("leads").execute();
    await h.warehouse.db.deleteFrom("schedules").execute();
    h.requested();
    const result = await verify(h.context(), { deep: "mismatched" });
    // 150 leads in pages of 100: two pages, once.
    expect(h.requested().filter((path) => path === "/api/v1/leads/")).toHaveLength(2);
    const of = (stream: string) => result.lines.find((line) => line.campaignUid === CAMPAIGN && line.stream === stream);
    expect(of("leads")).toMatchObject({ status: "missing", upstream: 150, warehouse: 0, missingKeys: { count: 150, first: ["L1", "L10", "L100", "L101", "L102"] } });
    expect(of("schedules")).toMatchObject({ status: "missing", upstream: 150, warehouse: 0, missingKeys: { count: 150, first: ["1001", "1002", "1003", "1004", "1005"] } });
  });
});
