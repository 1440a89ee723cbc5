import { afterEach, describe, expect, it } from "vitest";
import { runCampaignSync } from "../../src/sync/runs.ts";
import { UpstreamClient } from "../../src/upstream/client.ts";
import type { Lead } from "../../src/upstream/resources.ts";
import { buildLead } from "../support/scripted-upstream.ts";
import { CAMPAIGN, leadsOf, useEngineHarness, type Harness } from "./engine-harness.ts";

/**
 * A leads walk that has to walk again from the start (a lead arrived behind the cursor, so the first walk read
 * fewer positions than the total) meets the same unplaceable lead and the same deviating field twice. The run
 * met one record that could not be placed and one deviating field: engine-rejected.test.ts ("4b") holds a record
 * at a page boundary to being counted once; a second pass of the same walk must not count it again either.
 */

const harness = useEngineHarness("rewalk_counts_once");
const clients: UpstreamClient[] = [];
function smallPages(h: Harness, pageSize: number): UpstreamClient {
  const client = new UpstreamClient({ baseUrl: h.upstream.url, apiKey: "k", requestsPerSecond: 5_000, maxRetries: 1, retryBaseMs: 1, retryCapMs: 5, timeoutMs: 5_000, pageSize });
  clients.push(client);
  return client;
}
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
});

describe("a leads walk that walks again from the start", () => {
  it("counts the one unplaceable lead and the one deviating field once, not once per pass", async () => {
    const h = await harness(5);
    const [, second, third] = leadsOf(h) as [Lead, Lead, Lead];
    delete (second as Partial<Lead>).uid;
    (third.schedules[0] as { status: unknown }).status = 12345;
    // After the first page, a new lead arrives at the front: the first walk reads 5 positions of a total of 6 and walks again.
    let inserted = false;
    h.upstream.hook = ({ path, query }) => {
      if (path === "/api/v1/leads/" && Number(query.get("offset")) > 0 && !inserted) {
        inserted = true;
        leadsOf(h).unshift(buildLead("L0", 1000));
      }
      return undefined;
    };

    const summary = await runCampaignSync(h.context({ client: smallPages(h, 2) }), CAMPAIGN);

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
});
