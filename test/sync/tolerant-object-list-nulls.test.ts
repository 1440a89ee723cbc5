import { describe, expect, it } from "vitest";
import { runFullSync } from "../../src/sync/runs.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";

/**
 * README: "an object as a one-item list (…) → that object, named on the field". The object is read, so its fields
 * are what the upstream sent: a documented null in it (reply_to_address, from_time, to_time, time_zone are
 * nullable) is a value, to be written, not a field that could not be read (which keeps the row's old value).
 */

type Json = Record<string, unknown>;
const CAMPAIGN = "cmp_settings_list";
const scripted = useScriptedCampaigns(useTestDatabase("tolerant_object_list_nulls"), CAMPAIGN);

describe("campaign settings sent as a one-item list", () => {
  it("writes the documented nulls the settings hold, not the values the row held before", async () => {
    const h = await scripted({ status: "running", leads: 1 });
    const [campaign] = h.upstream.state.campaigns as unknown as Json[];
    const settings = campaign!.settings as Json;
    settings.reply_to_address = "replies@example.test";
    settings.time_zone = "Europe/Paris";
    await runFullSync(h.context());

    // The user cleared the reply-to address and the time zone; the upstream now wraps settings in a list.
    const detail = { ...campaign, settings: [{ ...settings, reply_to_address: null, time_zone: null }] };
    h.upstream.hook = (request) => (request.path === "/api/v1/campaign/" ? { status: 200, body: detail } : undefined);
    const summary = await runFullSync(h.context());

    const row = await h.warehouse.db.selectFrom("campaigns").select(["reply_to_address", "time_zone", "_field_issues"]).executeTakeFirstOrThrow();
    expect(summary.fieldIssues).toMatchObject({ "campaigns.settings": 1 });
    expect(row._field_issues).toMatchObject({ campaign_detail: { settings: { reason: "a one-item list where an object is documented; read as its item" } } });
    expect({ reply_to_address: row.reply_to_address, time_zone: row.time_zone }).toEqual({ reply_to_address: null, time_zone: null });
  });
});
