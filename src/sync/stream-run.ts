import { createHash } from "node:crypto";
import type { CheckpointKey, CheckpointState } from "./checkpoints.ts";
import type { SyncContext } from "./context.ts";
import type { StreamDefinition, StreamScope } from "./stream.ts";

/** What running one stream produced, and how to run it: shared by the engine and each kind of stream. */

export interface StreamResult<R = unknown> {
  stream: string;
  campaignUid: string | null;
  fetched: number;
  written: number;
  rejected: number;
  /** With `collect`: records this run had not seen before (a paged walk's records past its anchor, a list's new records). */
  fresh: R[];
  /** With `collect`: the records a lookup stream fetched (a campaign's detail). */
  records: R[];
  durationMs: number;
  error?: Error;
}

export interface StreamOptions {
  runId: number;
  /** Merged into the checkpoint's state when the scan completes. */
  completedState?: CheckpointState;
  /** Keep `fresh` and `records` in the result; off by default so that memory stays flat however large a listing grows. */
  collect?: boolean;
}

export class SyncAbortedError extends Error {
  constructor() {
    super("the sync was asked to stop");
    this.name = "SyncAbortedError";
  }
}

export function checkpointKey(ctx: SyncContext, stream: StreamDefinition, scope: StreamScope): CheckpointKey {
  return { account: ctx.account, campaignUid: scope.campaignUid ?? "", stream: stream.name };
}

export function fingerprint(keys: readonly string[]): string | null {
  return keys.length === 0 ? null : createHash("sha256").update(keys.join("\n")).digest("hex").slice(0, 32);
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new SyncAbortedError();
}

