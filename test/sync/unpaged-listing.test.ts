import { describe, expect, it } from "vitest";
import { runCampaignSync } from "../../src/sync/runs.ts";
import { CAMPAIGN, leadsOf, liveLeads, useEngineHarness, useSmallPages, type Harness } from "./engine-harness.ts";

/**
 * An upstream that ignores the `offset` query parameter (a proxy or a half-deployed API that drops the query)
 * answers every page with its first records: the cursor moves, nothing new comes, no page is short. The walk ends
 * (src/sync/walk.ts, UnpagedListingError) instead of re-reading them forever. Each run here is stopped after
 * SAFETY_STOP requests to the leads listing, only so that the test ends if the walk does not.
 */

const harness = useEngineHarness("unpaged_listing");
const smallPages = useSmallPages();
const LEADS = "/api/v1/leads/";
const SAFETY_STOP = 50;

/** Serves the leads listing ignoring `offset` (and, with `ignoreLimit`, `limit` too); aborts the run after SAFETY_STOP leads requests. */
function ignoreOffset(h: Harness, stop: AbortController, ignoreLimit: boolean): { count(): number } {
  let requests = 0;
  h.upstream.hook = ({ path, query }) => {
    if (path !== LEADS) return undefined;
    requests += 1;
    if (requests >= SAFETY_STOP) stop.abort(new Error("safety stop: the walk does not end"));
    const all = leadsOf(h);
    const data = ignoreLimit ? all : all.slice(0, Number(query.get("limit")));
    return { status: 200, body: { data, total: all.length } };
  };
  return { count: () => requests };
}

describe("a leads listing whose upstream ignores the offset", () => {
  it("ends the walk of an upstream that answers every page with the whole listing (no paging at all), every lead landed", async () => {
    const h = await harness(5);
    const client = smallPages(h, 2);
    const stop = new AbortController();
    const leadsRequests = ignoreOffset(h, stop, true);

    const summary = await runCampaignSync(h.context({ client, signal: stop.signal }), CAMPAIGN);

    // Every lead was on the first page, whose total (5) it met: nothing is left to read.
    expect({ endedOnItsOwn: !stop.signal.aborted, outcome: summary.outcome }).toEqual({ endedOnItsOwn: true, outcome: "succeeded" });
    expect(leadsRequests.count()).toBeLessThan(10);
    expect(await liveLeads(h)).toEqual(["L1", "L2", "L3", "L4", "L5"]);
  });

  it("ends the walk of an upstream that repeats page 1 for every offset, partial, deleting none of the leads it cannot reach", async () => {
    const h = await harness(5);
    const client = smallPages(h, 2);
    // A first run against a well-behaved upstream lands every lead.
    expect((await runCampaignSync(h.context({ client }), CAMPAIGN)).outcome).toBe("succeeded");
    expect(await liveLeads(h)).toEqual(["L1", "L2", "L3", "L4", "L5"]);

    const stop = new AbortController();
    const leadsRequests = ignoreOffset(h, stop, false);
    const summary = await runCampaignSync(h.context({ client, signal: stop.signal }), CAMPAIGN);

    // L3..L5 are unreachable through this listing: the walk cannot prove itself, so it must say so and delete nothing.
    expect({ endedOnItsOwn: !stop.signal.aborted, outcome: summary.outcome }).toEqual({ endedOnItsOwn: true, outcome: "partial" });
    expect(leadsRequests.count()).toBeLessThan(SAFETY_STOP);
    expect(await liveLeads(h)).toEqual(["L1", "L2", "L3", "L4", "L5"]);
  });
});
