import { describe, expect, it } from "vitest";
import { runFullSync } from "../../src/sync/runs.ts";
import type { LinkClickEvent } from "../../src/upstream/resources.ts";
import { useTestDatabase } from "../support/database.ts";
import { replyArrives, useScriptedCampaigns, type ScriptedCampaign } from "../support/scripted-campaign.ts";

/**
 * A 200 answer that carries an error beside `"data": null` (GraphQL's `{"data": null, "errors": [...]}`, or this
 * API's own error form, `{"message": "..."}`, contract A.2) is an outage answered as 200, not an empty listing as
 * Go encodes one: read as empty, two such answers in a row would soft-delete every reply and click.
 */

const CAMPAIGN = "cmp_error_body";
const scripted = useScriptedCampaigns(useTestDatabase("error_beside_null_data"), CAMPAIGN);
const REPLIES = "/api/v1/replies/";
const CLICKS = "/api/v1/campaign/link-click-events/";

async function synced(): Promise<ScriptedCampaign> {
  const h = await scripted({ status: "running", leads: 2, sentOn: "2026-05-01T09:05:00.000Z" });
  replyArrives(h, CAMPAIGN, 0, 5);
  replyArrives(h, CAMPAIGN, 1, 6);
  const clicks: LinkClickEvent[] = [
    { schedule_id: 1001, link: "https://example.com/a", clicked_on: "2026-05-01T10:00:00.000Z" },
    { schedule_id: 1002, link: "https://example.com/b", clicked_on: "2026-05-01T11:00:00.000Z" },
  ];
  h.upstream.state.clicks.set(CAMPAIGN, clicks);
  expect((await runFullSync(h.context())).outcome).toBe("succeeded");
  return h;
}

const liveReplies = async (h: ScriptedCampaign) =>
  (await h.warehouse.db.selectFrom("replies").select("id").where("_deleted_at", "is", null).orderBy("id").execute()).map((row) => row.id);
const liveClicks = async (h: ScriptedCampaign) =>
  (await h.warehouse.db.selectFrom("link_clicks").select("link").where("_deleted_at", "is", null).orderBy("link").execute()).map((row) => row.link);

describe("a 200 answer that carries an error beside data: null", () => {
  it("does not read {data: null, errors: [...]} as an empty replies listing: no reply deleted, the run not succeeded", async () => {
    const h = await synced();
    expect(await liveReplies(h)).toEqual([5, 6]);

    h.upstream.hook = ({ path }) => (path === REPLIES ? { status: 200, body: { data: null, errors: [{ message: "upstream request timed out" }] } } : undefined);
    const outcomes = [(await runFullSync(h.context())).outcome, (await runFullSync(h.context())).outcome];

    expect({ replies: await liveReplies(h), outcomes }).toEqual({ replies: [5, 6], outcomes: ["partial", "partial"] });
  });

  it("does not read {data: null, message: ...} as an empty click listing: no click deleted, the run not succeeded", async () => {
    const h = await synced();
    expect(await liveClicks(h)).toEqual(["https://example.com/a", "https://example.com/b"]);

    h.upstream.hook = ({ path }) => (path === CLICKS ? { status: 200, body: { data: null, message: "Internal error: could not read events" } } : undefined);
    const outcomes = [(await runFullSync(h.context())).outcome, (await runFullSync(h.context())).outcome];

    expect({ clicks: await liveClicks(h), outcomes }).toEqual({ clicks: ["https://example.com/a", "https://example.com/b"], outcomes: ["partial", "partial"] });
  });
});
