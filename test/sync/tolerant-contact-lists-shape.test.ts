import { describe, expect, it } from "vitest";
import { runFullSync } from "../../src/sync/runs.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";

/**
 * README, "When the upstream deviates": "one record where a list of records is documented (… a campaign's
 * `selected_contact_lists` as one object) → a list of that one record, read as any". Its items are opaque objects
 * (`z.record`), records all the same: the single object must not be read as a value of the wrong type and stored
 * as NULL.
 */

type Json = Record<string, unknown>;
const CAMPAIGN = "cmp_lists_shape";
const scripted = useScriptedCampaigns(useTestDatabase("tolerant_lists_shape"), CAMPAIGN);

describe("a campaign's selected_contact_lists in another shape", () => {
  it("reads one object sent for selected_contact_lists as a one-item list, as the README promises", async () => {
    const h = await scripted({ status: "running", leads: 1 });
    const [campaign] = h.upstream.state.campaigns as unknown as Json[];
    (campaign as Json).selected_contact_lists = { uid: "lst_a", name: "Founders" };

    const summary = await runFullSync(h.context());

    const row = await h.warehouse.db.selectFrom("campaigns").select(["selected_contact_lists", "_field_issues"]).executeTakeFirstOrThrow();
    expect({ outcome: summary.outcome, lists: row.selected_contact_lists }).toEqual({ outcome: "succeeded", lists: [{ uid: "lst_a", name: "Founders" }] });
    expect(row._field_issues).toMatchObject({
      campaign_detail: { selected_contact_lists: { reason: "a single item where a list is documented; read as a one-item list" } },
    });
  });

  it("does not leave the lists a campaign held when the upstream switches to sending its one list as an object", async () => {
    const h = await scripted({ status: "running", leads: 1 });
    const [campaign] = h.upstream.state.campaigns as unknown as Json[];
    (campaign as Json).selected_contact_lists = [{ uid: "lst_a" }, { uid: "lst_b" }];
    await runFullSync(h.context());

    // lst_b was removed from the campaign; the upstream now sends the one remaining list unwrapped.
    (campaign as Json).selected_contact_lists = { uid: "lst_a" };
    await runFullSync(h.context());

    const row = await h.warehouse.db.selectFrom("campaigns").select("selected_contact_lists").executeTakeFirstOrThrow();
    expect(row.selected_contact_lists).toEqual([{ uid: "lst_a" }]);
  });
});
