import { describe, expect, it } from "vitest";
import { runFullSync } from "../../src/sync/runs.ts";
import { useTestDatabase } from "../support/database.ts";
import { replyArrives, useScriptedCampaigns } from "../support/scripted-campaign.ts";

/**
 * README, "When the upstream deviates": a list of records sent as an object keyed by index (`{"0": …, "1": …}`, as
 * PHP and some serializers write a list) or by each record's id (or uid) is read as that list. That holds for nested lists
 * (a lead's schedules) and, since, a listing's own `data` or a bare listing such as the replies #13: in that shape
 * it was a protocol error, so the stream failed on every run and not one of its records was placed or set aside.
 * The deviation is in one field (`data`); it must not cost every record the field holds, and it is named.
 */

const CAMPAIGN = "cmp_keyed";
const scripted = useScriptedCampaigns(useTestDatabase("tolerant_keyed_listing"), CAMPAIGN);

describe("a listing whose records arrive as an object keyed by index or id", () => {
  it.each([
    ["{\"0\": lead, \"1\": lead}, keyed by index", (_uid: string, index: number) => String(index)],
    ["{\"L1\": lead, \"L2\": lead}, keyed by each lead's uid (leads have no id)", (uid: string) => uid],
  ])("places the leads of a page whose data is %s", async (_shape, keyOf) => {
    const h = await scripted({ status: "running", leads: 2, sentOn: "2026-05-01T10:00:00.000Z" });
    h.upstream.hook = (request) => {
      if (request.path !== "/api/v1/leads/") return undefined;
      const all = h.upstream.state.leads.get(CAMPAIGN) ?? [];
      const offset = Number(request.query.get("offset") ?? 0);
      const slice = all.slice(offset, offset + Number(request.query.get("limit") ?? 10));
      return { status: 200, body: { data: Object.fromEntries(slice.map((lead, index) => [keyOf(lead.uid, index), lead])), total: all.length } };
    };

    const summary = await runFullSync(h.context());

    const leads = await h.warehouse.db.selectFrom("leads").select("uid").orderBy("uid").execute();
    const rejected = await h.warehouse.db.selectFrom("rejected_records").select("stream").execute();
    expect({ leads: leads.map((row) => row.uid), rejected: rejected.length, failures: summary.failures }).toEqual({ leads: ["L1", "L2"], rejected: 0, failures: [] });
    expect(summary.fieldIssues).toMatchObject({ "leads.data": 1 });
    expect(summary.outcome).toBe("succeeded");
  });

  it("places the replies of a replies listing sent as {\"5\": reply}, keyed by each reply's id", async () => {
    const h = await scripted({ status: "running", leads: 1, sentOn: "2026-05-01T10:00:00.000Z" });
    replyArrives(h, CAMPAIGN, 0, 5);
    h.upstream.hook = (request) => {
      if (request.path !== "/api/v1/replies/") return undefined;
      const replies = h.upstream.state.replies.get(CAMPAIGN) ?? [];
      return { status: 200, body: Object.fromEntries(replies.map((reply) => [String(reply.id), reply])) };
    };

    const summary = await runFullSync(h.context());

    // mail_from and subject only the listing carries: the nested copy in the schedule does not.
    const reply = await h.warehouse.db.selectFrom("replies").select(["id", "mail_from", "subject"]).executeTakeFirstOrThrow();
    const runs = await h.warehouse.db.selectFrom("sync_runs").select(["errors", "field_issues"]).execute();
    expect({ reply, errors: runs[0]?.errors }).toEqual({ reply: { id: 5, mail_from: "L1@example.com", subject: "Re: Step 1" }, errors: [] });
    expect(runs[0]?.field_issues).toMatchObject({ "replies.data": 1 });
    expect(summary.outcome).toBe("succeeded");
  });

  it("reads a page whose data is {} (an empty list as map serializers write it) as empty, proving nothing", async () => {
    const h = await scripted({ status: "running", leads: 0, sentOn: "2026-05-01T10:00:00.000Z" });
    h.upstream.hook = (request) => (request.path === "/api/v1/leads/" ? { status: 200, body: { data: {}, total: 0 } } : undefined);

    const summary = await runFullSync(h.context());

    const runs = await h.warehouse.db.selectFrom("sync_runs").select(["errors", "field_issues"]).execute();
    expect(runs[0]?.errors).toEqual([]);
    expect(runs[0]?.field_issues).toMatchObject({ "leads.data": 2, "leads.total": 2 });
    expect(summary.outcome).toBe("succeeded");
  });
});
