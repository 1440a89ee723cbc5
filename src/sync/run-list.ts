import { addStage, stageStart } from "../stage-timings.ts";
import type { SyncedTableName } from "../warehouse/tables.ts";
import { loadCheckpoint, previousScan, saveCheckpoint } from "./checkpoints.ts";
import type { SyncContext } from "./context.ts";
import { keyRows, naturalKeyText, type KeyRow } from "./natural-keys.ts";
import { writePage } from "./page-writer.ts";
import { WalkCoverage } from "./soft-delete.ts";
import type { ListStream, StreamScope } from "./stream.ts";
import { addCounts, checkpointKey, type StreamOptions, type StreamResult } from "./stream-run.ts";
import { reportListingIssue, REPEATED, SHORT_LISTING } from "./walk-proof.ts";

/**
 * A listing that arrives whole (workspaces, replies): one transaction for the
 * records, soft-deletes and checkpoint. Such a listing has no total to check a
 * short or empty answer against, so a row it leaves out is soft-deleted only
 * when two reads in a row leave it out. A record it lists more than once is
 * written once, and named on the run as `<listing>.duplicate`, as a paged
 * listing's are.
 *
 * An answer in the {data, total} envelope whose total counts more positions
 * than it holds says itself that it left records out (an upstream that began
 * to page the listing): its records are written, but it judges nothing gone
 * and is no complete read; the stream fails, named as `<listing>.total`.
 */

export class ShortListingError extends Error {
  constructor(
    stream: string,
    readonly held: number,
    readonly total: number,
    consequence = "what it left out is not judged deleted",
  ) {
    super(`the ${stream} listing held ${held} records (distinct, and the copies it repeated) where its total says ${total}: ${consequence}`);
    this.name = "ShortListingError";
  }
}

export async function runList<R>(ctx: SyncContext, stream: ListStream<R>, scope: StreamScope, options: StreamOptions<R>, result: StreamResult<R>): Promise<void> {
  const key = checkpointKey(ctx, stream, scope);
  const checkpoint = await loadCheckpoint(ctx.db, key);
  const readStartedAt = new Date();
  const waitStart = stageStart();
  const listing = await stream.fetch(ctx.client, scope, ctx.signal);
  addStage("fetchWait", waitStart);
  // What the warehouse held before this read: the records it finds new (onFresh). Read before the listing is written.
  const held = options.onFresh ? await heldKeys(ctx, stream as ListStream<unknown>, scope) : new Map<SyncedTableName, KeyRow[]>();
  const coverage = new WalkCoverage(stream);
  coverage.add(listing.records, listing.rejected);
  const positions = coverage.distinct + coverage.repeated;
  // The total an answer short of it announced; undefined for an answer that holds what it says (or says nothing).
  const shortOf = listing.total !== null && positions < listing.total ? listing.total : undefined;
  const counts = await writePage(
    ctx,
    { stream, scope, records: listing.records, rejected: listing.rejected, runId: options.runId, observedAt: listing.observedAt },
    async (trx) => {
      if (shortOf !== undefined) {
        // Not a whole answer: it breaks the run of whole answers that leave a row out, which starts again.
        const state = { ...checkpoint.state, missing: undefined };
        await saveCheckpoint(trx, key, { ...checkpoint, cursorOffset: 0, upstreamTotal: listing.total, fingerprint: null, scanStartedAt: null, state }, options.runId);
        return;
      }
      const completedAt = new Date();
      const missing = await coverage.markMissingAgain(trx, scope, completedAt, readStartedAt, checkpoint.state.missing ?? []);
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
  reportListingIssue(ctx, stream as ListStream<unknown>, scope, { what: "duplicate", count: coverage.repeated, reason: REPEATED }, result);
  if (listing.shape !== undefined) reportListingIssue(ctx, stream as ListStream<unknown>, scope, { what: "data", count: 1, reason: `a listing answer in another shape than a list: ${listing.shape}` }, result);
  if (shortOf !== undefined) {
    reportListingIssue(ctx, stream as ListStream<unknown>, scope, { what: "total", count: 1, reason: SHORT_LISTING }, result);
    throw new ShortListingError(stream.name, positions, shortOf);
  }
  const onFresh = options.onFresh;
  if (!onFresh) return;
  const firstRule = stream.softDelete?.[0];
  // A first read finds every record new; after it, records with a row (live or not) are known.
  const known = new Set(checkpoint.lastCompleteScanAt === null || !firstRule ? [] : (held.get(firstRule.table) ?? []).map((row) => row.text));
  for (const { value } of listing.records) {
    if (!firstRule || (firstRule.keys(value) ?? []).some((vouched) => !known.has(naturalKeyText(firstRule.table, vouched)))) onFresh(value);
  }
}

/** The rows of each soft-delete rule's table in the scope, read before the listing is written. */
async function heldKeys(ctx: SyncContext, stream: ListStream<unknown>, scope: StreamScope): Promise<Map<SyncedTableName, KeyRow[]>> {
  const held = new Map<SyncedTableName, KeyRow[]>();
  for (const rule of stream.softDelete ?? []) held.set(rule.table, await keyRows(ctx.db, rule.table, rule.within(scope), "all"));
  return held;
}
