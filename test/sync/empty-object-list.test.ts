import { describe, expect, it } from "vitest";
import { runCampaignSync } from "../../src/sync/runs.ts";
import type { Lead } from "../../src/upstream/resources.ts";
import { CAMPAIGN, leadsOf, useEngineHarness } from "./engine-harness.ts";

/**
 * README ("When the upstream deviates") reads a list of records sent as an object keyed by index
 * (`{"0": {…}, "1": {…}}`, what PHP's JSON_FORCE_OBJECT and similar serializers write) as that list. The same
 * serializer writes an empty list as `{}`: an object keyed by no index, which is an empty list. It must not be
 * read as one record without an id, set aside as a record that "could not be placed" and make the run partial:
 * no such record exists upstream.
 */

const harness = useEngineHarness("empty_object_list");

describe("an empty list of records sent as {}", () => {
  it("a schedule's replies and link_click_events sent as {} are no replies and no clicks: nothing rejected, the run succeeded", async () => {
    const h = await harness(3);
    const schedule = (leadsOf(h)[0] as Lead).schedules[0] as unknown as Record<string, unknown>;
    schedule.replies = {};
    schedule.link_click_events = {};

    const summary = await runCampaignSync(h.context(), CAMPAIGN);

    const rejected = await h.warehouse.db.selectFrom("rejected_records").select(["stream", "reason", "payload"]).execute();
    expect(rejected).toEqual([]);
    expect(summary.outcome).toBe("succeeded");
  });

  it("a lead's schedules sent as {} are no schedules: nothing rejected, the run succeeded", async () => {
    const h = await harness(3);
    const lead = leadsOf(h)[1] as unknown as Record<string, unknown>;
    lead.schedules = {};

    const summary = await runCampaignSync(h.context(), CAMPAIGN);

    const rejected = await h.warehouse.db.selectFrom("rejected_records").select(["stream", "reason", "payload"]).execute();
    expect(rejected).toEqual([]);
    expect(summary.outcome).toBe("succeeded");
    // Kept, and named: the deviation is the lead's, at the list's path.
    const row = await h.warehouse.db.selectFrom("leads").select("_field_issues").where("uid", "=", lead.uid as string).executeTakeFirstOrThrow();
    expect(row._field_issues).toMatchObject({ leads: { schedules: { reason: "an empty list sent as {}; read as an empty list" } } });
  });
});
