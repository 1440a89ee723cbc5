import { describe, expect, it } from "vitest";
import { runFullSync } from "../../src/sync/runs.ts";
import { verify } from "../../src/sync/verify.ts";
import type { Reply } from "../../src/upstream/resources.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";

/** A listing that arrives whole (#13 replies, #18 workspaces) in an envelope whose total says it holds more than it sent. */

const CAMPAIGN = "cmp_short_listing";
const scripted = useScriptedCampaigns(useTestDatabase("short_listings"), CAMPAIGN);

function reply(id: number): Reply {
  return {
    id,
    schedule_id: 1001,
    body_plain_text: "hi",
    body_html: "<p>hi</p>",
    received_on: "2026-05-01T11:00:00.000Z",
    mail_from: "lead@example.com",
    subject: "Re: Step 1",
    reply_classification: "positive",
  };
}

describe("a whole listing short of its own total", () => {
  it("writes the replies it holds, deletes none it left out, and fails the stream by name; full answers judge deletions again", async () => {
    const h = await scripted({ status: "running", leads: 1, sentOn: "2026-05-01T10:00:00.000Z" });
    h.upstream.state.replies.set(CAMPAIGN, [reply(9001), reply(9002), reply(9003), reply(9004)]);
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    const db = h.warehouse.db;
    const live = async () => (await db.selectFrom("replies").select("id").where("_deleted_at", "is", null).orderBy("id").execute()).map((row) => row.id);

    // The upstream begins to page its reply listing, and says so: 2 records of a total of 4 (a fifth, new, among them).
    h.upstream.hook = (request) => (request.path === "/api/v1/replies/" ? { status: 200, body: { data: [reply(9001), reply(9005)], total: 5 } } : undefined);
    const short = [await runFullSync(h.context()), await runFullSync(h.context())];
    expect(await live()).toEqual([9001, 9002, 9003, 9004, 9005]);
    expect(short.map((run) => run.outcome)).toEqual(["partial", "partial"]);
    expect(short[1]?.fieldIssues).toMatchObject({ "replies.total": 1 });
    expect(short[1]?.failures.map((failure) => `${failure.stream}: ${failure.error.message}`)).toEqual([
      "replies: the replies listing held 2 records (distinct, and the copies it repeated) where its total says 5: what it left out is not judged deleted",
    ]);

    // verify has nothing whole to compare with: it says so, instead of calling the replies the answer left out extra.
    const lines = (await verify(h.context())).lines.filter((line) => line.status !== "ok");
    expect(lines).toEqual([
      {
        campaignUid: CAMPAIGN,
        stream: "replies",
        status: "unknown",
        upstream: 5,
        warehouse: 5,
        rejected: 0,
        reason: "the replies listing held 2 records (distinct, and the copies it repeated) where its total says 5: nothing whole to compare with",
      },
    ]);

    // Whole answers again, in the envelope: 9004 is gone once two of them in a row leave it out.
    h.upstream.hook = (request) =>
      request.path === "/api/v1/replies/" ? { status: 200, body: { data: [9001, 9002, 9003, 9005].map(reply), total: 4 } } : undefined;
    const whole = [await runFullSync(h.context()), await runFullSync(h.context())];
    expect(whole.map((run) => run.outcome)).toEqual(["succeeded", "succeeded"]);
    expect(await live()).toEqual([9001, 9002, 9003, 9005]);
  });

  it("starts the count of whole answers that leave a reply out again after a short answer (two whole answers in a row)", async () => {
    const h = await scripted({ status: "running", leads: 1, sentOn: "2026-05-01T10:00:00.000Z" });
    h.upstream.state.replies.set(CAMPAIGN, [reply(9001), reply(9002)]);
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    const live = async () =>
      (await h.warehouse.db.selectFrom("replies").select("id").where("_deleted_at", "is", null).orderBy("id").execute()).map((row) => row.id);

    // 1. A whole answer (bare array) leaves 9002 out: it is remembered as missing once, and stays.
    h.upstream.hook = (request) => (request.path === "/api/v1/replies/" ? { status: 200, body: [reply(9001)] } : undefined);
    await runFullSync(h.context());
    expect(await live()).toEqual([9001, 9002]);

    // 2. The upstream lists 9002 again, in an answer short of its total: 9002 is read, written, live.
    h.upstream.hook = (request) =>
      request.path === "/api/v1/replies/" ? { status: 200, body: { data: [reply(9001), reply(9002)], total: 3 } } : undefined;
    expect((await runFullSync(h.context())).outcome).toBe("partial");
    expect(await live()).toEqual([9001, 9002]);

    // 3. One whole answer leaves 9002 out again. Since it was last listed only this one whole answer left it out:
    // README: "a row leaves only once two whole answers in a row leave it out".
    h.upstream.hook = (request) => (request.path === "/api/v1/replies/" ? { status: 200, body: [reply(9001)] } : undefined);
    await runFullSync(h.context());
    expect(await live()).toEqual([9001, 9002]);
  });

  it("keeps a workspace the envelope's total says the workspace listing left out", async () => {
    const h = await scripted({ status: "running", leads: 1 });
    const [main] = h.upstream.state.workspaces;
    if (!main) throw new Error("no workspace");
    h.upstream.state.workspaces.push({ ...main, id: 2, name: "Second" });
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");

    h.upstream.hook = (request) => (request.path === "/api/v1/workspaces/" ? { status: 200, body: { data: [main], total: 2 } } : undefined);
    const runs = [await runFullSync(h.context()), await runFullSync(h.context())];

    const live = await h.warehouse.db.selectFrom("workspaces").select("id").where("_deleted_at", "is", null).orderBy("id").execute();
    expect(live.map((row) => row.id)).toEqual([1, 2]);
    expect(runs.map((run) => [run.outcome, run.fieldIssues["workspaces.total"]])).toEqual([
      ["partial", 1],
      ["partial", 1],
    ]);
  });
});
