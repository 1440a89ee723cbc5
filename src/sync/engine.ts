import { isKeyRefused } from "../upstream/errors.ts";
import type { SyncContext } from "./context.ts";
import { runList } from "./run-list.ts";
import { runLookup } from "./run-lookup.ts";
import { runPaged } from "./run-paged.ts";
import type { StreamDefinition, StreamScope } from "./stream.ts";
import { emptyCounts, SyncAbortedError, type StreamOptions, type StreamResult } from "./stream-run.ts";

/**
 * The one engine that runs every stream, whatever its kind: it fetches,
 * writes each page with its checkpoint in one transaction, soft-deletes what
 * a complete scan no longer returns, and reports what it did. A stream's
 * failure is its own, reported with its result, except a refused API key,
 * which ends the whole run: it is thrown.
 */

export { SyncAbortedError, type StreamOptions, type StreamResult } from "./stream-run.ts";

export async function runStream<R>(ctx: SyncContext, stream: StreamDefinition<R>, scope: StreamScope, options: StreamOptions<R>): Promise<StreamResult<R>> {
  const startedAt = Date.now();
  const result: StreamResult<R> = {
    stream: stream.name,
    campaignUid: scope.campaignUid,
    fetched: 0,
    ...emptyCounts(),
    records: [],
    durationMs: 0,
  };
  // Whether the stream went well; a stream stopped half-way is neither, and is not observed.
  let ok: boolean | undefined;
  try {
    if (stream.kind === "paged") await runPaged(ctx, stream, scope, options, result);
    else if (stream.kind === "list") await runList(ctx, stream, scope, options, result);
    else await runLookup(ctx, stream, scope, options, result);
    ok = true;
  } catch (error) {
    if (error instanceof SyncAbortedError) throw error;
    // A request cut short by the caller's signal is the stop it asked for, not a failing stream.
    if (ctx.signal?.aborted) throw new SyncAbortedError();
    ok = false;
    // A refused key fails every request after it too: the run stops (runs.ts records it once, for the run).
    if (isKeyRefused(error)) throw error;
    result.error = error instanceof Error ? error : new Error(String(error));
    ctx.logger.warn({ stream: stream.name, campaignUid: scope.campaignUid, err: result.error }, "stream failed");
  } finally {
    result.durationMs = Date.now() - startedAt;
    if (ok !== undefined) ctx.observer?.onStreamFinished?.({ campaignUid: scope.campaignUid, stream: stream.name, durationMs: result.durationMs, ok });
  }
  return result;
}

