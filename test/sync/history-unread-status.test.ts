import { describe, expect, it } from "vitest";
import { runCampaignSync, runDiscovery, runFullSync } from "../../src/sync/runs.ts";
import type { Campaign } from "../../src/upstream/resources.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";

/**
 * End to end: the campaign's detail (#2) answers with a status that cannot be read (null, a drift the emulator
 * serves), and a new daily limit. The version the history records for the new limit is dated by an observation
 * made before the limit changed (the previous read's, plus a microsecond), not by the detail read that saw it.
 */

const UID = "cmp_unread_status";
const scripted = useScriptedCampaigns(useTestDatabase("history_unread_status"), UID);

describe("campaign_history through the engine", () => {
  it("dates a settings change seen by a detail whose status deviated by that detail's read, not earlier", async () => {
    const h = await scripted({ status: "running", leads: 1 });
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");

    // The upstream changes the limit now; from now on its detail answers status null (tolerated, left out).
    await new Promise((resolve) => setTimeout(resolve, 20));
    const changedAt = new Date();
    const campaign = h.upstream.state.campaigns[0] as Campaign;
    campaign.settings.daily_email_limit = 80;
    h.upstream.hook = (request) => (request.path === "/api/v1/campaign/" ? { status: 200, body: { ...campaign, status: null } } : undefined);
    await runCampaignSync(h.context(), UID);
    const held = await h.warehouse.db.selectFrom("campaigns").select(["status", "daily_email_limit"]).where("uid", "=", UID).executeTakeFirstOrThrow();
    expect(held).toEqual({ status: "running", daily_email_limit: 80 });

    const versions = await h.warehouse.db
      .selectFrom("campaign_history")
      .select(["valid_from", "valid_to", "detail_observed_at", "settings"])
      .where("campaign_uid", "=", UID)
      .orderBy("valid_from")
      .execute();
    // The listing's first version (settings null but the name, as documented), the detail's, then the new limit.
    expect(versions.map((version) => (version.settings as { daily_email_limit: number | null }).daily_email_limit)).toEqual([null, 50, 80]);
    const [, before, after] = versions;
    // The limit was read as 50 until after `changedAt`; the history must not say it was 80 before then.
    expect(after?.valid_from.getTime()).toBeGreaterThanOrEqual(changedAt.getTime());
    expect(after?.valid_from).toEqual(after?.detail_observed_at);
    expect(before?.valid_to).toEqual(after?.valid_from);
  });
});

describe("campaign_history through the engine, discovery beside a campaign sync", () => {
  it("records no version pairing the old name with the new settings when a listing page sent earlier lands after the detail", async () => {
    const h = await scripted({ status: "running", leads: 1 });
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    const campaign = h.upstream.state.campaigns[0] as Campaign;
    const oldName = campaign.settings.name;

    // Discovery's campaign listing is sent now (old name) and held in flight.
    let arrived: () => void = () => undefined;
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const listedBefore = { uid: campaign.uid, name: oldName, workspace_id: 1, created_on: campaign.created_on, status: campaign.status };
    h.upstream.hook = async (request) => {
      if (request.path === "/api/v1/campaigns/") {
        arrived();
        await released;
        return { status: 200, body: { data: [listedBefore], total: 1 } };
      }
      // The detail answers the campaign as it is, but for a status that deviates (null).
      if (request.path === "/api/v1/campaign/") return { status: 200, body: { ...campaign, status: null } };
      return undefined;
    };
    const discovery = runDiscovery(h.context());
    await reached;

    // One upstream update renames the campaign and raises its limit; the campaign's sync reads its detail.
    campaign.settings.name = "Renamed";
    campaign.settings.daily_email_limit = 80;
    await runCampaignSync(h.context(), UID);
    release();
    await discovery;

    const held = await h.warehouse.db.selectFrom("campaigns").select(["name", "daily_email_limit"]).where("uid", "=", UID).executeTakeFirstOrThrow();
    const versions = await h.warehouse.db.selectFrom("campaign_history").select(["settings"]).where("campaign_uid", "=", UID).orderBy("valid_from").execute();
    const states = versions.map((version) => {
      const settings = version.settings as { name: string; daily_email_limit: number | null };
      return [settings.name, settings.daily_email_limit];
    });
    // The upstream showed (old name, 50) then (Renamed, 80): never (old name, 80).
    expect.soft(states).not.toContainEqual([oldName, 80]);
    expect.soft(held).toEqual({ name: "Renamed", daily_email_limit: 80 });
  });
});
