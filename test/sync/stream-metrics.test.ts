import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { createMetrics } from "../../src/http/metrics.ts";
import { runCampaignSync } from "../../src/sync/runs.ts";
import { holdRequests } from "../support/scripted-upstream.ts";
import { CAMPAIGN, liveLeads, useEngineHarness } from "./engine-harness.ts";

/**
 * What the sync tells /metrics agrees with what it did: a stream is observed as ok only when it went well (one
 * stopped half-way is not observed), and rows are counted as upserted once their page committed.
 */

const harness = useEngineHarness("stream_metrics");
type Metrics = ReturnType<typeof createMetrics>;

/** The `_count` samples of coldsync_stream_duration_seconds for `stream`, keyed by the `ok` label. */
async function streamCounts(metrics: Metrics, stream: string): Promise<Record<string, number>> {
  const metric = await metrics.registry.getSingleMetric("coldsync_stream_duration_seconds")?.get();
  const counts: Record<string, number> = {};
  for (const value of metric?.values ?? []) {
    const name = (value as { metricName?: string }).metricName;
    if (name !== "coldsync_stream_duration_seconds_count" || value.labels.stream !== stream) continue;
    counts[String(value.labels.ok)] = value.value;
  }
  return counts;
}

async function rowsUpserted(metrics: Metrics, table: string): Promise<number> {
  const metric = await metrics.registry.getSingleMetric("coldsync_rows_upserted_total")?.get();
  return metric?.values.find((value) => value.labels.table === table)?.value ?? 0;
}

describe("coldsync_stream_duration_seconds{ok}", () => {
  it("observes a leads walk that ended on a 401 as not ok", async () => {
    const h = await harness(3);
    h.upstream.hook = (request) => (request.path === "/api/v1/leads/" ? { status: 401, body: { message: "invalid API key" } } : undefined);
    const metrics = createMetrics();

    const summary = await runCampaignSync(h.context({ observer: metrics.syncObserver }), CAMPAIGN, "leads");

    expect(summary.outcome).not.toBe("succeeded");
    expect(await streamCounts(metrics, "leads")).toEqual({ false: 1 });
  });

  it("does not observe a leads walk cut short by a stop (shutdown)", async () => {
    const h = await harness(3);
    const held = holdRequests(h.upstream, "/api/v1/leads/");
    const metrics = createMetrics();
    const controller = new AbortController();

    const running = runCampaignSync(h.context({ observer: metrics.syncObserver, signal: controller.signal }), CAMPAIGN, "leads");
    await held.reached;
    controller.abort(new Error("the worker is shutting down"));
    held.release();
    const summary = await running;

    expect(summary.outcome).toBe("aborted");
    expect(await streamCounts(metrics, "leads")).toEqual({});
    // The streams that went well before it are observed.
    expect(await streamCounts(metrics, "campaign_detail")).toEqual({ true: 1 });
  });
});

describe("coldsync_rows_upserted_total", () => {
  it("does not count the rows of a page whose transaction rolled back", async () => {
    const h = await harness(3);
    const db = h.warehouse.db;
    // A fault the page's transaction meets after its upserts (as a terminated backend or a failed commit would):
    // the leads page's checkpoint cannot be written, so the page rolls back whole.
    await sql`CREATE FUNCTION fail_leads_checkpoint() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'injected: the page''s checkpoint could not be written'; END $$`.execute(db);
    await sql`CREATE TRIGGER fail_leads_checkpoint BEFORE INSERT OR UPDATE ON sync_checkpoints
      FOR EACH ROW WHEN (NEW.stream = 'leads') EXECUTE FUNCTION fail_leads_checkpoint()`.execute(db);
    const metrics = createMetrics();
    try {
      const summary = await runCampaignSync(h.context({ observer: metrics.syncObserver }), CAMPAIGN, "leads");

      expect(summary.outcome).toBe("partial");
      expect(summary.streams.leads?.written).toBe(0);
      expect(await liveLeads(h)).toEqual([]);
      expect(await rowsUpserted(metrics, "leads")).toBe(0);
      // The detail's page committed: its row is counted.
      expect(await rowsUpserted(metrics, "campaigns")).toBe(1);
    } finally {
      await sql`DROP TRIGGER fail_leads_checkpoint ON sync_checkpoints`.execute(db);
      await sql`DROP FUNCTION fail_leads_checkpoint()`.execute(db);
    }
  });
});
