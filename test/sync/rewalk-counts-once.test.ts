import { describe, expect, it } from "vitest";
import { runCampaignSync, type RunSummary } from "../../src/sync/runs.ts";
import type { Lead } from "../../src/upstream/resources.ts";
import { buildLead } from "../support/scripted-upstream.ts";
import { CAMPAIGN, leadsOf, useEngineHarness, useSmallPages, type Harness } from "./engine-harness.ts";

/**
 * A leads walk that has to walk again from the start (a lead arrived behind the cursor, so the first walk read
 * fewer positions than the total) meets the same unplaceable lead and the same deviating field twice. The run
 * met one record that could not be placed and one deviating field: engine-rejected.test.ts ("4b") holds a record
 * at a page boundary to being counted once; a second pass of the same walk must not count it again either. Nor
 * must the proof of the later walk take the records counted by the earlier one (their rejected_records rows keep
 * its last_seen_at) for records it no longer met: a lead that still cannot be placed stays unresolved.
 */

const harness = useEngineHarness("rewalk_counts_once");
const smallPages = useSmallPages();

/**
 * Syncs the campaign in pages of two while, after the first page, a new lead arrives at the front: the first walk
 * reads 5 positions of a total of 6 and walks again.
 */
async function syncWhileALeadArrives(h: Harness): Promise<{ summary: RunSummary; inserted: boolean }> {
  let inserted = false;
  h.upstream.hook = ({ path, query }) => {
    if (path === "/api/v1/leads/" && Number(query.get("offset")) > 0 && !inserted) {
      inserted = true;
      leadsOf(h).unshift(buildLead("L0", 1000));
    }
    return undefined;
  };
  const summary = await runCampaignSync(h.context({ client: smallPages(h, 2) }), CAMPAIGN);
  return { summary, inserted };
}

describe("a leads walk that walks again from the start", () => {
  it("counts the one unplaceable lead and the one deviating field once, not once per pass", async () => {
    const h = await harness(5);
    const [, second, third] = leadsOf(h) as [Lead, Lead, Lead];
    delete (second as Partial<Lead>).uid;
    (third.schedules[0] as { status: unknown }).status = 12345;
    const { summary, inserted } = await syncWhileALeadArrives(h);

    const db = h.warehouse.db;
    const run = await db.selectFrom("sync_runs").select(["rejected", "skipped", "field_issues"]).where("id", "=", summary.runId).executeTakeFirstOrThrow();
    const rows = await db.selectFrom("rejected_records").select(["times_seen"]).where("stream", "=", "leads").execute();
    expect(inserted).toBe(true);
    expect(summary.outcome).toBe("partial");
    // One lead (with its contact and schedule below it) could not be placed; one schedule status deviated.
    expect({ rejected: run.rejected, skipped: run.skipped, field_issues: run.field_issues, times_seen: rows.map((row) => row.times_seen) }).toEqual({
      rejected: 1,
      skipped: 2,
      field_issues: { "schedules.status": 1 },
      times_seen: [1],
    });
  });

  it("keeps a record that still cannot be placed (and a part below a lead) unresolved in rejected_records", async () => {
    const h = await harness(5);
    const [, second, third] = leadsOf(h) as [Lead, Lead, Lead];
    delete (second as Partial<Lead>).uid;
    // A schedule without its id: a part below a placed lead that cannot be placed.
    delete (third.schedules[0] as { id?: unknown }).id;
    const { summary, inserted } = await syncWhileALeadArrives(h);

    expect(inserted).toBe(true);
    expect(summary.outcome).toBe("partial");
    const rows = await h.warehouse.db.selectFrom("rejected_records").select(["parent_key", "resolved_at", "reason"]).where("stream", "=", "leads").execute();
    expect(rows.length).toBeGreaterThan(0);
    // Still listed, still unplaceable: nothing may be resolved.
    expect(rows.filter((row) => row.resolved_at !== null)).toEqual([]);
  });
});
