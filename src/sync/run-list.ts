import { sql } from "kysely";
import { addStage, stageStart } from "../stage-timings.ts";
import { NATURAL_KEYS } from "../warehouse/tables.ts";
import { loadCheckpoint, previousScan, saveCheckpoint } from "./checkpoints.ts";
import type { SyncContext } from "./context.ts";
import { naturalKeyText } from "./natural-keys.ts";
import { writePage } from "./page-writer.ts";
import { WalkCoverage } from "./soft-delete.ts";
import type { ListStream, StreamScope } from "./stream.ts";
import { addCounts, checkpointKey, type StreamOptions, type StreamResult } from "./stream-run.ts";

/**
 * A listing that arrives whole (workspaces, replies): one transaction for the
 * records, soft-deletes and checkpoint. Such a listing has no total to check a
 * short or empty answer against, so a row it leaves out is soft-deleted only
 * when two reads in a row leave it out.
 */

export async function runList<R>(ctx: SyncContext, stream: ListStream<R>, scope: StreamScope, options: StreamOptions, result: StreamResult<R>): Promise<void> {
  const key = checkpointKey(ctx, stream, scope);
  const checkpoint = await loadCheckpoint(ctx.db, key);
  const readStartedAt = new Date();
  const waitStart = stageStart();
  const listing = await stream.fetch(ctx.client, scope, ctx.signal);
  addStage("fetchWait", waitStart);
  const known = options.collect && checkpoint.lastCompleteScanAt !== null ? await knownKeys(ctx, stream as ListStream<unknown>, scope) : new Set<string>();
  const coverage = new WalkCoverage(stream);
  coverage.add(listing.records, listing.rejected);
  const counts = await writePage(
    ctx,
    { stream, scope, records: listing.records, rejected: listing.rejected, runId: options.runId, observedAt: listing.observedAt },
    async (trx) => {
      const completedAt = new Date();
      const missing = await coverage.markMissingTwice(trx, scope, completedAt, checkpoint.state.missing ?? []);
      await coverage.resolveRejected(trx, scope, readStartedAt, completedAt);
      await saveCheckpoint(
        trx,
        key,
        {
          cursorOffset: 0,
          upstreamTotal: listing.records.length + listing.rejected.length,
          fingerprint: null,
          scanStartedAt: null,
          lastCompleteScanAt: completedAt,
          state: { ...checkpoint.state, ...options.completedState, missing, ...previousScan(checkpoint) },
        },
        options.runId,
      );
    },
  );
  result.fetched = listing.records.length + listing.rejected.length;
  addCounts(result, counts);
  if (!options.collect) return;
  const firstRule = stream.softDelete?.[0];
  result.fresh = listing.records
    .map((record) => record.value)
    .filter((record) => !firstRule || (firstRule.keys(record) ?? []).some((vouched) => !known.has(naturalKeyText(firstRule.table, vouched))));
}

/** Natural keys of the stream's rows already in the warehouse, to tell new records from known ones. */
async function knownKeys(ctx: SyncContext, stream: ListStream<unknown>, scope: StreamScope): Promise<Set<string>> {
  const rule = stream.softDelete?.[0];
  if (!rule) return new Set();
  const columns = NATURAL_KEYS[rule.table];
  let query = ctx.db.selectFrom(rule.table).select(columns.map((column) => sql.ref(column).as(column)));
  for (const [column, value] of Object.entries(rule.within(scope))) query = query.where(sql.ref(column), "=", value);
  const rows = (await query.execute()) as Record<string, unknown>[];
  return new Set(rows.map((row) => naturalKeyText(rule.table, row)));
}
