import { InvalidRecordError, UpstreamError } from "../upstream/client.ts";
import { markDeleted } from "../warehouse/upsert.ts";
import { loadCheckpoint, saveCheckpoint } from "./checkpoints.ts";
import type { SyncContext } from "./context.ts";
import { writePage } from "./page-writer.ts";
import { SoftDeleteKeys } from "./soft-delete.ts";
import type { LookupStream, StreamScope } from "./stream.ts";
import { checkpointKey, throwIfAborted, type StreamOptions, type StreamResult } from "./stream-run.ts";

/** Records fetched one by one (a campaign's detail, email sequences): a 404 soft-deletes, an invalid one is rejected. */

export async function runLookup<R>(ctx: SyncContext, stream: LookupStream<R>, scope: StreamScope, options: StreamOptions, result: StreamResult<R>): Promise<void> {
  const key = checkpointKey(ctx, stream, scope);
  const checkpoint = await loadCheckpoint(ctx.db, key);
  const ids = await stream.ids(ctx.db, scope, checkpoint.lastCompleteScanAt);
  for (const id of ids) {
    throwIfAborted(ctx.signal);
    let record: R;
    try {
      record = await stream.fetch(ctx.client, id, ctx.signal);
    } catch (error) {
      result.fetched += 1;
      if (error instanceof InvalidRecordError) {
        const counts = await writePage(ctx.db, { stream, scope, records: [], rejected: [error.rejected], runId: options.runId, syncedAt: new Date() }, async () => undefined);
        result.rejected += counts.rejected;
        continue;
      }
      if (error instanceof UpstreamError && error.status === 404) {
        await markDeleted(ctx.db, stream.missing.table, { [stream.missing.column]: id } as never, [], new Date());
        continue;
      }
      throw error;
    }
    result.fetched += 1;
    if (options.collect) result.records.push(record);
    const vouched = new SoftDeleteKeys(stream);
    vouched.add([record]);
    const counts = await writePage(
      ctx.db,
      { stream, scope, records: [record], rejected: [], runId: options.runId, syncedAt: new Date() },
      (trx) => vouched.markMissing(trx, scope, new Date()),
      ctx.observer,
    );
    result.written += counts.written;
  }
  await saveCheckpoint(
    ctx.db,
    key,
    {
      ...checkpoint,
      cursorOffset: 0,
      upstreamTotal: ids.length,
      scanStartedAt: null,
      lastCompleteScanAt: new Date(),
      state: { ...checkpoint.state, ...options.completedState },
    },
    options.runId,
  );
}

