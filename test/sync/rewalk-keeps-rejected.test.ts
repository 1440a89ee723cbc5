import { afterEach, describe, expect, it } from "vitest";
import { runCampaignSync } from "../../src/sync/runs.ts";
import { UpstreamClient } from "../../src/upstream/client.ts";
import type { Lead } from "../../src/upstream/resources.ts";
import { buildLead } from "../support/scripted-upstream.ts";
import { CAMPAIGN, leadsOf, useEngineHarness, type Harness } from "./engine-harness.ts";

/**
 * A walk that walks again from the start does not record again the unplaceable records an earlier walk of the run
 * met (they were counted once), so their rejected_records rows keep the first walk's last_seen_at. The proof of the
 * later walk must not take them for records it no longer met: a lead that still cannot be placed stays unresolved.
 */

const harness = useEngineHarness("rewalk_keeps_rejected");
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
  it("keeps a record that still cannot be placed (and a part below a lead) unresolved in rejected_records", async () => {
    const h = await harness(5);
    const [, second, third] = leadsOf(h) as [Lead, Lead, Lead];
    delete (second as Partial<Lead>).uid;
    // A schedule without its id: a part below a placed lead that cannot be placed.
    delete (third.schedules[0] as { id?: unknown }).id;
    let inserted = false;
    h.upstream.hook = ({ path, query }) => {
      if (path === "/api/v1/leads/" && Number(query.get("offset")) > 0 && !inserted) {
        inserted = true;
        leadsOf(h).unshift(buildLead("L0", 1000));
      }
      return undefined;
    };

    const summary = await runCampaignSync(h.context({ client: smallPages(h, 2) }), CAMPAIGN);

    expect(inserted).toBe(true);
    expect(summary.outcome).toBe("partial");
    const rows = await h.warehouse.db.selectFrom("rejected_records").select(["parent_key", "resolved_at", "reason"]).where("stream", "=", "leads").execute();
    expect(rows.length).toBeGreaterThan(0);
    // Still listed, still unplaceable: nothing may be resolved.
    expect(rows.filter((row) => row.resolved_at !== null)).toEqual([]);
  });
});
