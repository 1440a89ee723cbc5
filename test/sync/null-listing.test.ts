import { describe, expect, it } from "vitest";
import { runFullSync } from "../../src/sync/runs.ts";
import type { LinkClickEvent } from "../../src/upstream/resources.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";

/**
 * README ("When the upstream deviates"): an empty listing sent as null, `{"data": null, "total": 0}` (as Go encodes
 * an empty slice), is "an empty listing (it deletes nothing on its own, as any empty answer: a walk proves nothing,
 * a whole listing needs two reads)". Its total must not prove the walk whole: clicks have no lookup to confirm a
 * deletion, so one such answer would soft-delete every click of the campaign.
 */

const databaseUrl = useTestDatabase("null_listing");
const CAMPAIGN = "cmp_null_listing";
const scripted = useScriptedCampaigns(databaseUrl, CAMPAIGN);

describe("a link-click listing answered {data: null, total: 0} once", () => {
  it("deletes no click on its own", async () => {
    const h = await scripted({ status: "running", leads: 2, sentOn: "2026-05-01T09:05:00.000Z" });
    const clicks: LinkClickEvent[] = [
      { schedule_id: 1001, link: "https://example.com/a", clicked_on: "2026-05-01T10:00:00.000Z" },
      { schedule_id: 1002, link: "https://example.com/b", clicked_on: "2026-05-01T11:00:00.000Z" },
    ];
    h.upstream.state.clicks.set(CAMPAIGN, clicks);
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    const live = () => h.warehouse.db.selectFrom("link_clicks").select("link").where("_deleted_at", "is", null).orderBy("link").execute();
    expect((await live()).map((row) => row.link)).toEqual(["https://example.com/a", "https://example.com/b"]);

    // One run during which the click listing answers as Go encodes an empty slice.
    h.upstream.hook = ({ path }) => (path === "/api/v1/campaign/link-click-events/" ? { status: 200, body: { data: null, total: 0 } } : undefined);
    await runFullSync(h.context());

    expect((await live()).map((row) => row.link)).toEqual(["https://example.com/a", "https://example.com/b"]);
  });
});
