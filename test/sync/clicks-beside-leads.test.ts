import { describe, expect, it } from "vitest";
import { runCampaignSync } from "../../src/sync/runs.ts";
import type { Lead, LinkClickEvent } from "../../src/upstream/resources.ts";
import { holdRequests } from "../support/scripted-upstream.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";

/**
 * The link-click listing's proven walk soft-deletes, at its completion, the live link_clicks rows of the campaign
 * it did not see, but not those written since it began (link_clicks has no `_observed_at`: markDeleted's
 * `observedBefore` reads `_synced_at`). A click that arrived upstream after the walk's last page was fetched, and
 * that the leads rhythm (its own lock, so it runs beside the events rhythm in the worker) wrote from a schedule's
 * copy meanwhile, was soft-deleted by the older observation; the leads copy never revives it (copiesInto: revive
 * false), and the run said `succeeded`.
 */

const databaseUrl = useTestDatabase("clicks_beside_leads");
const CAMPAIGN = "cmp_clicks";
const scripted = useScriptedCampaigns(databaseUrl, CAMPAIGN);

const SENT = "2026-05-01T09:00:00.000Z";

describe("a click the leads rhythm writes while the click listing's walk is in flight", () => {
  it("stays live: the walk's older answer does not soft-delete it", async () => {
    const h = await scripted({ status: "running", leads: 2, sentOn: SENT });
    const leads = h.upstream.state.leads.get(CAMPAIGN) as Lead[];
    const scheduleOf = (index: number) => (leads[index] as Lead).schedules[0] as Lead["schedules"][number];
    // One click on L1's schedule, nested and listed.
    const first = { id: 501, link: "https://example.test/a", clicked_on: "2026-05-01T10:00:00.000Z" };
    scheduleOf(0).link_click_events.push(first);
    const listed: LinkClickEvent[] = [{ schedule_id: scheduleOf(0).id, link: first.link, clicked_on: first.clicked_on }];
    h.upstream.state.clicks.set(CAMPAIGN, listed);

    // The leads rhythm first: the campaign, its leads and L1's click (from its schedule's copy).
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");

    // The events rhythm's click walk (its first: from the start) asks for its only page; the answer is the listing
    // as it stood then, and lands late.
    const asAsked = { status: 200, body: { data: structuredClone(listed), total: listed.length } };
    const held = holdRequests(h.upstream, "/api/v1/campaign/link-click-events/", () => asAsked);
    const events = runCampaignSync(h.context(), CAMPAIGN, "events");
    await held.reached;

    // Meanwhile L2 clicks: upstream now lists the click and L2's schedule carries it; the leads rhythm writes it.
    const second = { id: 502, link: "https://example.test/b", clicked_on: "2026-05-01T11:00:00.000Z" };
    scheduleOf(1).link_click_events.push(second);
    listed.push({ schedule_id: scheduleOf(1).id, link: second.link, clicked_on: second.clicked_on });
    const hook = h.upstream.hook;
    h.upstream.hook = (request) => (request.path === "/api/v1/campaign/link-click-events/" ? hook?.(request) : undefined);
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    const written = await h.warehouse.db.selectFrom("link_clicks").select(["id", "_deleted_at"]).where("schedule_id", "=", scheduleOf(1).id).execute();
    expect(written).toEqual([{ id: 502, _deleted_at: null }]);

    held.release();
    const summary = await events;
    h.upstream.hook = undefined;

    // The click exists upstream (in the listing and in L2's schedule) and a newer read wrote it.
    const row = await h.warehouse.db.selectFrom("link_clicks").select(["id", "_deleted_at"]).where("schedule_id", "=", scheduleOf(1).id).executeTakeFirstOrThrow();
    expect({ outcome: summary.outcome, click: row }).toEqual({ outcome: "succeeded", click: { id: 502, _deleted_at: null } });
  });
});
