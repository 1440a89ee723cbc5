import { boundHeapGrowth } from "../../src/heap.ts";
import { createLogger } from "../../src/logger.ts";
import { ByteBudget } from "../../src/sync/byte-budget.ts";
import { runFullSync } from "../../src/sync/runs.ts";
import { enableStageTimings, STAGES, stageTotals, type Stage } from "../../src/stage-timings.ts";
import { UpstreamClient } from "../../src/upstream/client.ts";
import type { Warehouse } from "../../src/warehouse/connect.ts";

/** The real thing, as `coldsync sync --once` runs it (one page budget for the process), with the stage timings on for the breakdown. */

export interface SyncFigures {
  records: number;
  requests: number;
  stages: Record<Stage, number>;
}

/**
 * Sets the process up as the CLI does (its heap's growth) and switches the stage timings on. Must run before
 * the warehouse is opened: the database time is read from the query log it sets up.
 */
export function prepareSyncProcess(): void {
  boundHeapGrowth();
  enableStageTimings();
}

export async function syncPhase(warehouse: Warehouse, url: string, key: string, concurrency: number, allowPartial: boolean): Promise<SyncFigures> {
  const before = stageTotals();
  const client = new UpstreamClient({ baseUrl: url, apiKey: key, requestsPerSecond: 100_000, concurrency, maxRetries: 6 });
  const summary = await runFullSync({ client, db: warehouse.db, account: "bench", logger: createLogger({ level: "warn" }), trigger: "cli", pageBudget: new ByteBudget() });
  await client.close();
  const finished = summary.outcome === "succeeded" || (allowPartial && summary.outcome === "partial" && summary.failures.length === 0);
  if (!finished) throw new Error(`sync ${summary.outcome}: ${summary.failures.map((failure) => failure.error.message).join("; ")}`);
  const records = Object.values(summary.streams).reduce((sum, totals) => sum + totals.fetched, 0);
  const after = stageTotals();
  const stages = Object.fromEntries(STAGES.map((stage) => [stage, after[stage] - before[stage]])) as Record<Stage, number>;
  return { records, requests: summary.requests, stages };
}
