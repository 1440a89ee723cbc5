import { describe, expect, it } from "vitest";
import { runFullSync } from "../../src/sync/runs.ts";
import { verify } from "../../src/sync/verify.ts";
import type { Lead } from "../../src/upstream/resources.ts";
import { buildLead } from "../support/scripted-upstream.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";

/**
 * README ("Verifying"): "A count that agrees with the warehouse only through the copies the sync's last proof saw a
 * page repeat (...) is compared by key." A count that agrees through them can hide a missing lead as well as one
 * that disagrees can hide none.
 */

const databaseUrl = useTestDatabase("verify_repeats_agree");
const CAMPAIGN = "cmp_repeats";
const scripted = useScriptedCampaigns(databaseUrl, CAMPAIGN);

describe("verify, after a proof that counted a repeated copy", () => {
  it("names a lead the warehouse lacks when the count agrees only through the repeated copy", async () => {
    const h = await scripted({ status: "running", leads: 3 });
    const leads = h.upstream.state.leads.get(CAMPAIGN) as Lead[];
    // The upstream lists L1 twice (total 4): the sync names it leads.duplicate, and its proof counts 1 copy.
    leads.splice(1, 0, structuredClone(leads[0] as Lead));
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");

    // Now the listing holds L1, L2, L3 and a new L4 (total 4): the warehouse holds L1..L3, L4 is missing.
    leads.splice(1, 1);
    leads.push(buildLead("L4", 1004));

    const result = await verify(h.context());
    const leadsLine = result.lines.find((line) => line.stream === "leads" && line.campaignUid === CAMPAIGN);
    expect(leadsLine?.status).toBe("missing");
    expect(result.problems).toBeGreaterThan(0);
  });
});
