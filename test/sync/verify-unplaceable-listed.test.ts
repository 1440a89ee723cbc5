import { describe, expect, it } from "vitest";
import { runFullSync } from "../../src/sync/runs.ts";
import { verify, type VerifyLine } from "../../src/sync/verify.ts";
import type { Lead, Reply } from "../../src/upstream/resources.ts";
import { buildLead } from "../support/scripted-upstream.ts";
import { useTestDatabase } from "../support/database.ts";
import { replyArrives, useScriptedCampaigns } from "../support/scripted-campaign.ts";

/**
 * verify is "the one command whose purpose is to say whether the warehouse is complete". A record the upstream
 * lists now that the warehouse holds neither as a row nor in rejected_records (it arrived after the last sync,
 * and cannot be placed) is missing from the warehouse, where verify compares by key (replies always, any stream
 * with --deep=all) as where it compares counts.
 */

const databaseUrl = useTestDatabase("verify_unplaceable_listed");
const CAMPAIGN = "cmp_unplaceable";
const scripted = useScriptedCampaigns(databaseUrl, CAMPAIGN);

const notOk = (lines: VerifyLine[]) => lines.filter((line) => line.status !== "ok").map((line) => `${line.stream} ${line.status}`);

describe("verify, once the upstream lists a record the warehouse holds nowhere", () => {
  it("a reply without an id that arrived after the sync is not reported ok", async () => {
    const h = await scripted({ status: "running", leads: 2, sentOn: "2026-05-01T09:05:00.000Z" });
    replyArrives(h, CAMPAIGN, 0, 501);
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    expect(notOk((await verify(h.context())).lines)).toEqual([]);

    // A second reply arrives, on L2's schedule, without an id: held nowhere in the warehouse.
    const replies = h.upstream.state.replies.get(CAMPAIGN) as Reply[];
    const { id: _id, ...withoutId } = { ...(replies[0] as Reply), schedule_id: 1002, body_plain_text: "Not now" };
    replies.push(withoutId as Reply);

    const result = await verify(h.context());
    expect(notOk(result.lines)).toEqual(["replies missing"]);
    expect(result.lines.find((line) => line.stream === "replies")?.reason).toBe("1 listed record(s) that cannot be placed are not in rejected_records either");

    // Once a sync has kept it in rejected_records, it is a `rejected` line, and the replies themselves agree.
    await runFullSync(h.context());
    expect(notOk((await verify(h.context())).lines)).toEqual(["replies rejected"]);
  });

  it("with --deep=all, a lead without a uid that arrived after the sync is not reported ok (the count check without --deep names it)", async () => {
    const h = await scripted({ status: "running", leads: 2 });
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    const broken = buildLead("LX", 1099) as Partial<Lead>;
    delete broken.uid;
    (h.upstream.state.leads.get(CAMPAIGN) as Lead[]).push(broken as Lead);

    const counted = await verify(h.context());
    expect(notOk(counted.lines)).toContain("leads missing");

    const deep = await verify(h.context(), { deep: "all" });
    expect(notOk(deep.lines)).toContain("leads missing");
  });
});
