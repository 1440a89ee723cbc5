import { createHash } from "node:crypto";
import type { CheckpointKey, CheckpointState } from "./checkpoints.ts";
import type { SyncContext } from "./context.ts";
import type { StreamDefinition, StreamScope } from "./stream.ts";

/** What running one stream produced, and how to run it: shared by the engine and each kind of stream. */

/** What writing some records did. */
export interface WriteCounts {
  written: number;
  /** Records, and parts of records, that could not be placed. */
  rejected: number;
  /** Records below rejected ones that could not be placed because they could not. */
  skipped: number;
  /** Deviating fields met, per `table.field` (array positions as `*`). */
  fieldIssues: Record<string, number>;
  /** The page wrote nothing: the warehouse held a newer observation of it (stream.supersededIn). */
  superseded?: boolean;
}

export interface StreamResult<R = unknown> extends WriteCounts {
  stream: string;
  campaignUid: string | null;
  fetched: number;
  /** With `collect`: the records a lookup stream fetched (a campaign's detail). */
  records: R[];
  /** For a paged stream: whether the walk started at offset 0 and proved it saw every record. */
  proven?: boolean;
  durationMs: number;
  error?: Error;
}

export interface StreamOptions<R = unknown> {
  runId: number;
  /** Merged into the checkpoint's state when a scan proves it saw every record. */
  completedState?: CheckpointState;
  /** Keep a lookup's `records` in the result (a campaign's detail: one record). */
  collect?: boolean;
  /**
   * Given each record this run had not seen before (a paged walk's records past its anchor, a list's new records)
   * once its page is written; nothing of them is kept, so that memory stays flat however large a listing grows.
   */
  onFresh?: (record: R) => void;
}

export class SyncAbortedError extends Error {
  constructor() {
    super("the sync was asked to stop");
    this.name = "SyncAbortedError";
  }
}

export function emptyCounts(): WriteCounts {
  return { written: 0, rejected: 0, skipped: 0, fieldIssues: {} };
}

/** Adds `counts` into `into`. */
export function addCounts(into: WriteCounts, counts: WriteCounts): void {
  into.written += counts.written;
  into.rejected += counts.rejected;
  into.skipped += counts.skipped;
  for (const [field, count] of Object.entries(counts.fieldIssues)) into.fieldIssues[field] = (into.fieldIssues[field] ?? 0) + count;
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
