import { describe, expect, it } from "vitest";
import { loadCheckpoint } from "../../src/sync/checkpoints.ts";
import { runCampaignSync } from "../../src/sync/runs.ts";
import { campaignLag } from "../../src/sync/status.ts";
import type { Lead } from "../../src/upstream/resources.ts";
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
