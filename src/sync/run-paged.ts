import type { Page } from "../upstream/client.ts";
import { loadCheckpoint, saveCheckpoint, type Checkpoint } from "./checkpoints.ts";
import type { SyncContext } from "./context.ts";
import { liveRows, rejectedRecords } from "./counts.ts";
import { inTransaction, writePage } from "./page-writer.ts";
import { SoftDeleteKeys } from "./soft-delete.ts";
import type { PagedStream, StreamScope } from "./stream.ts";
import { checkpointKey, fingerprint, throwIfAborted, type StreamOptions, type StreamResult } from "./stream-run.ts";
import { walk, type WalkStart } from "./walk.ts";

/**
 * A paginated listing: walked with a healing cursor, each page written with
 * its checkpoint, checked against the upstream's total, then soft-deletes.
 */

/** A walk that ends with fewer rows than the upstream's total starts over, this many walks at most. */
const MAX_PASSES = 4;

/** Where a paged walk starts: an interrupted walk resumes, an append stream continues at its end. */
function walkStart(stream: PagedStream<unknown>, checkpoint: Checkpoint): WalkStart {
  const tail = checkpoint.state.tail ?? [];
  const interrupted = checkpoint.scanStartedAt !== null && checkpoint.cursorOffset > 0;
  const continuing = stream.checkpoint === "append" && checkpoint.lastCompleteScanAt !== null;
  return interrupted || continuing ? { offset: checkpoint.cursorOffset, tail } : { offset: 0, tail: [] };
}

export async function runPaged<R>(ctx: SyncContext, stream: PagedStream<R>, scope: StreamScope, options: StreamOptions, result: StreamResult<R>): Promise<void> {
  const key = checkpointKey(ctx, stream, scope);
  const checkpoint = await loadCheckpoint(ctx.db, key);
  let start = walkStart(stream as PagedStream<unknown>, checkpoint);
  const scanStartedAt = checkpoint.scanStartedAt ?? new Date();
  for (let pass = 1; ; pass += 1) {
    const vouched = new SoftDeleteKeys(stream);
    let restarts = 0;
    const pages = walk({
      fetch: (offset, signal) =>
        ctx.client.page(stream.resource, { campaignUid: scope.campaignUid ?? undefined, offset }, signal) as Promise<Page<R>>,
      key: stream.key,
      start,
      signal: ctx.signal,
    });
    let step = await pages.next();
    let lastOffset = start.offset;
    let lastTail: string[] = [...start.tail];
    while (!step.done) {
      const walked = step.value;
      if (walked.restarts !== restarts) {
        restarts = walked.restarts;
        vouched.clear();
      }
      const page = walked.page;
      const counts = await writePage(
        ctx.db,
        { stream, scope, records: page.records, rejected: page.rejected, runId: options.runId, syncedAt: new Date() },
        (trx) =>
          saveCheckpoint(
            trx,
            key,
            {
              cursorOffset: walked.nextOffset,
              upstreamTotal: page.total,
              fingerprint: fingerprint(walked.tail),
              scanStartedAt,
              lastCompleteScanAt: checkpoint.lastCompleteScanAt,
              state: { ...checkpoint.state, tail: walked.tail },
            },
            options.runId,
          ),
        ctx.observer,
      );
      result.fetched += page.records.length + page.rejected.length;
      result.written += counts.written;
      result.rejected += counts.rejected;
      if (options.collect) result.fresh.push(...walked.fresh);
      vouched.add(page.records);
      lastOffset = walked.nextOffset;
      lastTail = walked.tail;
      throwIfAborted(ctx.signal);
      step = await pages.next();
    }
    const walkResult = step.value;
    if (!(await looksComplete(ctx, stream, scope, walkResult.total))) {
      if (pass >= MAX_PASSES) throw new Error(`after ${pass} walks the warehouse still has fewer ${stream.name} than the upstream total ${walkResult.total}`);
      ctx.logger.info({ stream: stream.name, campaignUid: scope.campaignUid, pass }, "fewer rows than the upstream total; walking again from the start");
      start = { offset: 0, tail: [] };
      continue;
    }
    await inTransaction(ctx.db, async (trx) => {
      const completedAt = new Date();
      if (walkResult.fromStart) await vouched.markMissing(trx, scope, completedAt);
      const appendAtEnd = stream.checkpoint === "append";
      await saveCheckpoint(
        trx,
        key,
        {
          cursorOffset: appendAtEnd ? lastOffset : 0,
          upstreamTotal: walkResult.total,
          fingerprint: appendAtEnd ? fingerprint(lastTail) : null,
          scanStartedAt: null,
          lastCompleteScanAt: completedAt,
          state: { ...checkpoint.state, ...options.completedState, tail: appendAtEnd ? lastTail : [] },
        },
        options.runId,
      );
    });
    return;
  }
}

/**
 * After a walk, the warehouse's live rows plus the stream's rejected records
 * must number at least the upstream's total; fewer means records slipped past
 * the cursor while the listing moved.
 */
async function looksComplete(ctx: SyncContext, stream: PagedStream<unknown>, scope: StreamScope, total: number): Promise<boolean> {
  if (!stream.completeness) return true;
  const [live, rejected] = await Promise.all([
    liveRows(ctx.db, stream.completeness.table, stream.completeness.within(scope)),
    rejectedRecords(ctx.db, scope.account, stream.name, scope.campaignUid),
  ]);
  return live + rejected >= total;
}

