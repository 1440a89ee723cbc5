import { describe, expect, it } from "vitest";
import { loadCheckpoint } from "../../src/sync/checkpoints.ts";
import { runCampaignSync } from "../../src/sync/runs.ts";
import { achievedCadences } from "../../src/sync/status.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";

const databaseUrl = useTestDatabase("rhythm_cadence");
const CAMPAIGN = "cmp_cadence";
const scripted = useScriptedCampaigns(databaseUrl, CAMPAIGN);

describe("the leads rhythm's achieved cadence", () => {
  it("is the time between the last two complete walks of the campaign's leads", async () => {
    const h = await scripted({ status: "running", leads: 3 });
    const context = h.context();
    const key = { account: context.account, campaignUid: CAMPAIGN, stream: "leads" };
    expect((await runCampaignSync(context, CAMPAIGN, "leads")).outcome).toBe("succeeded");
    const first = await loadCheckpoint(h.warehouse.db, key);
    expect((await runCampaignSync(context, CAMPAIGN, "leads")).outcome).toBe("succeeded");
    const second = await loadCheckpoint(h.warehouse.db, key);
    expect(second.state.previousCompleteScanAt).toBe(first.lastCompleteScanAt?.toISOString());
    const seconds = ((second.lastCompleteScanAt?.getTime() ?? 0) - (first.lastCompleteScanAt?.getTime() ?? 0)) / 1000;
    expect(await achievedCadences(h.warehouse.db, context.account)).toContainEqual({ campaign_uid: CAMPAIGN, rhythm: "leads", seconds });
  });
});
