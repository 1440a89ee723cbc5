import { describe, expect, it } from "vitest";
import { runFullSync } from "../../src/sync/runs.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";

/**
 * README: "a list of records in another shape: an object keyed by index (`"schedules": {"0": {…}, "1": {…}}`) →
 * that list". PHP writes a list with a removed item (unset, array_filter) as an object keyed by the indexes left:
 * {"0": s1, "2": s3}. It is that list, not one schedule whose fields are "0" and "2" (which has no id, and would
 * be rejected with neither schedule placed).
 */

type Json = Record<string, unknown>;
const CAMPAIGN = "cmp_gapped_index";
const scripted = useScriptedCampaigns(useTestDatabase("tolerant_gapped_index"), CAMPAIGN);

describe("a lead's schedules sent as an object keyed by index with a gap", () => {
  it("places each schedule of {\"0\": s1, \"2\": s2}, as it places {\"0\": s1, \"1\": s2}", async () => {
    const h = await scripted({ status: "running", leads: 1, sentOn: "2026-05-01T10:00:00.000Z" });
    const [lead] = h.upstream.state.leads.get(CAMPAIGN) as unknown as Json[];
    const [first] = lead!.schedules as Json[];
    lead!.schedules = { "0": { ...first, id: 2001 }, "2": { ...first, id: 2002 } };

    const summary = await runFullSync(h.context());

    const db = h.warehouse.db;
    const schedules = await db.selectFrom("schedules").select("id").orderBy("id").execute();
    const rejected = await db.selectFrom("rejected_records").select(["reason", "skipped"]).execute();
    expect({ outcome: summary.outcome, schedules: schedules.map((row) => row.id), rejected }).toEqual({ outcome: "succeeded", schedules: [2001, 2002], rejected: [] });
  });
});
