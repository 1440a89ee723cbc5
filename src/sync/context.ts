import type { Kysely } from "kysely";
import type { Logger } from "../logger.ts";
import type { UpstreamClient } from "../upstream/client.ts";
import type { Database } from "../warehouse/database.ts";
import type { ByteBudget } from "./byte-budget.ts";
import type { RunLocks } from "../warehouse/run-locks.ts";

/** Who started a run; stored in sync_runs.trigger. */
export type RunTrigger = "cli" | "worker" | "demo";

/** Hooks for metrics; every one is optional. */
export interface SyncObserver {
  onRowsWritten?(table: string, rows: number): void;
  /** A record, or a part of one, that could not be placed. */
  onRejected?(stream: string): void;
  /** Deviating fields a stream met, per `table.field`. */
  onFieldIssues?(stream: string, field: string, count: number): void;
  onStreamFinished?(event: { campaignUid: string | null; stream: string; durationMs: number; ok: boolean }): void;
}

/** Everything a sync needs: where to read, where to write, and under which account name. */
export interface SyncContext {
  client: UpstreamClient;
  db: Kysely<Database>;
  /** COLDSYNC_ACCOUNT: the account's name in sync_checkpoints and sync_runs. */
  account: string;
  logger: Logger;
  trigger: RunTrigger;
  /** Aborting stops after the page whose transaction is in flight has committed. */
  signal?: AbortSignal;
  /** Keeps one campaign synced by one process at a time; without it (tests of one process) nothing is locked. */
  locks?: RunLocks;
  observer?: SyncObserver;
  /** Bounds the bytes of pages fetched but not yet written, across every run sharing it (one per process). */
  pageBudget?: ByteBudget;
  /**
   * How long after a terminal campaign's last leads walk, its final walks done, its leads are walked again
   * (COLDSYNC_TERMINAL_REWALK_EVERY): what changes in them without an event (a contact that unsubscribed) is
   * seen no other way. Undefined: never.
   */
  terminalRewalkEveryMs?: number;
}
