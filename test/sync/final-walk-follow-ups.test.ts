import { describe, expect, it } from "vitest";
import { runCampaignSync } from "../../src/sync/runs.ts";
import type { Lead } from "../../src/upstream/resources.ts";
import { buildSequence, holdRequests } from "../support/scripted-upstream.ts";
import { CAMPAIGN, useEngineHarness } from "./engine-harness.ts";

/**
 * A terminal campaign's last final walk: the walk's completion commits (terminalWalks = 2), and the rest of the
 * leads rhythm (#9 for the email sequences the walk found) is cut short by a crash, a drain or a failed request.
 * The job is retried (or stalls and is taken up again), and every later cycle reads the detail alone: the sequences
 * the final walk discovered are never fetched with #9.
 */

const harness = useEngineHarness("final_walk_follow_ups");

async function sequenceRow(h: Awaited<ReturnType<typeof harness>>, id: number) {
  return h.warehouse.db.selectFrom("email_sequences").select(["id", "label", "score", "verdict", "_deleted_at"]).where("id", "=", id).executeTakeFirst();
}

describe("a crash after a terminal campaign's last final walk, before its email sequences are fetched", () => {
  it("fetches the sequences the final walk discovered once the campaign's job is taken up again", async () => {
    const h = await harness(3, "complete");
    // First final walk.
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    // Between the two final walks the campaign's last lead was moved to a second sequence (a regenerated schedule).
    h.upstream.state.sequences.set(2, { ...buildSequence(2), label: "passed", score: 91, verdict: "great" });
    const lead = (h.upstream.state.leads.get(CAMPAIGN) as Lead[])[2] as Lead;
    (lead.schedules[0] as Lead["schedules"][number]).email_data = { id: 2, subject: "Step 2", body: "<p>Hi</p>", email_content_type: "text/html" };

    // Second (last) final walk: the process dies while #9 is in flight (a drain or a SIGKILL: nothing of #9 commits).
    const stop = new AbortController();
    const held = holdRequests(h.upstream, "/api/v1/email-sequence/");
    const crashed = runCampaignSync(h.context({ signal: stop.signal }), CAMPAIGN, "leads");
    await held.reached;
    stop.abort(new Error("SIGKILL"));
    expect((await crashed).outcome).toBe("aborted");
    held.release();
    h.upstream.hook = undefined;

    // The interrupted job goes back to waiting and runs again (and every later cycle of the campaign too).
    const again = await runCampaignSync(h.context(), CAMPAIGN, "leads");
    expect(again.outcome).toBe("succeeded");
    await runCampaignSync(h.context(), CAMPAIGN, "leads");

    // The warehouse holds sequence 2 only from the schedule's copy: #9's label, score and verdict never land.
    expect(await sequenceRow(h, 2)).toEqual({ id: 2, label: "passed", score: 91, verdict: "great", _deleted_at: null });
  });

  it("fetches them on the retry when #9 failed once during the last final walk", async () => {
    const h = await harness(3, "complete");
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    h.upstream.state.sequences.set(2, { ...buildSequence(2), label: "passed", score: 91, verdict: "great" });
    const lead = (h.upstream.state.leads.get(CAMPAIGN) as Lead[])[2] as Lead;
    (lead.schedules[0] as Lead["schedules"][number]).email_data = { id: 2, subject: "Step 2", body: "<p>Hi</p>", email_content_type: "text/html" };

    // #9 answers 503 for the whole of the second cycle (the client's retries included): the run is partial, the job retried.
    h.upstream.hook = (request) => (request.path === "/api/v1/email-sequence/" ? { status: 503, body: { message: "busy" } } : undefined);
    const failed = await runCampaignSync(h.context(), CAMPAIGN, "leads");
    expect(failed.outcome).toBe("partial");
    h.upstream.hook = undefined;

    const retried = await runCampaignSync(h.context(), CAMPAIGN, "leads");
    expect(retried.outcome).toBe("succeeded");
    expect(await sequenceRow(h, 2)).toEqual({ id: 2, label: "passed", score: 91, verdict: "great", _deleted_at: null });
  });

  it("retires a sequence no live schedule sends once the process dies right after the last final walk committed", async () => {
    const h = await harness(2, "complete");
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    // Sequence 1 is deleted upstream and the schedules regenerated onto sequence 2.
    h.upstream.state.sequences.delete(1);
    h.upstream.state.sequences.set(2, buildSequence(2));
    for (const lead of h.upstream.state.leads.get(CAMPAIGN) as Lead[]) {
      (lead.schedules[0] as Lead["schedules"][number]).email_data = { id: 2, subject: "Step 2", body: "<p>Hi</p>", email_content_type: "text/html" };
    }
    // SIGKILL right after the last final walk's completion committed: nothing after it in the rhythm runs.
    const killed = h.context({
      observer: {
        onStreamFinished: ({ stream }) => {
          if (stream === "leads") throw new Error("killed");
        },
      },
    });
    expect((await runCampaignSync(killed, CAMPAIGN, "leads")).outcome).not.toBe("succeeded");
    // The job is taken up again, and the campaign's later cycles run as usual.
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    expect((await runCampaignSync(h.context(), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    // No live schedule sends sequence 1 and #9 no longer knows it, yet it stays live.
    expect((await sequenceRow(h, 1))?._deleted_at).not.toBeNull();
  });
});
