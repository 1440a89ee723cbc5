import { sql, type Kysely } from "kysely";
import type { Database, RunOutcome } from "../warehouse/database.ts";
import { runLockName, type RunLock, type RunLocks } from "../warehouse/run-locks.ts";
import type { SyncContext } from "./context.ts";
import type { StreamResult } from "./engine.ts";

/**
 * One row of `sync_runs` per run: opened when the run starts, closed with its
 * outcome, counts per stream, requests, retries, rejected records and errors.
 */

export interface StreamTotals {
  fetched: number;
  written: number;
  rejected: number;
  skipped: number;
}

export interface RunFailure {
  campaignUid: string | null;
  stream: string;
  error: Error;
}

export interface RunSummary {
  runId: number;
  /**
   * `succeeded`: every stream finished and every record was placed; `partial`: some stream failed, or some
   * record (or part of one) could not be placed; `failed`: a stream failed and the upstream answered no request
   * of the run with a success (2xx); `aborted`: asked to stop.
   */
  outcome: Exclude<RunOutcome, "running">;
  streams: Record<string, StreamTotals>;
  requests: number;
  retries: number;
  /** Records and parts of records that could not be placed (rejected_records). */
  rejected: number;
  /** Records below those that could not be placed because they could not. */
  skipped: number;
  /** Deviating fields met, per `table.field`: kept as NULL or coerced, each named on its row. */
  fieldIssues: Record<string, number>;
  durationMs: number;
  failures: RunFailure[];
}

export class RunLedger {
  readonly streams: Record<string, StreamTotals> = {};
  readonly failures: RunFailure[] = [];
  readonly fieldIssues: Record<string, number> = {};
  #aborted = false;

  private constructor(
    private readonly db: Kysely<Database>,
    readonly runId: number,
    private readonly startedAt: Date,
    private readonly ctx: SyncContext,
    private readonly lock: RunLock | undefined,
  ) {}

  /**
   * `ctx.client` must be the run's own view (UpstreamClient#tallied), whose counts are the run's.
   * `rhythm` says which of a campaign's rhythms the run is (null for a run of everything); `heldAs`, the lock
   * the caller already holds for the run row to name.
   */
  static async open(ctx: SyncContext, scope: string | null, rhythm: "leads" | "events" | null = null, heldAs?: string): Promise<RunLedger> {
    const startedAt = new Date();
    // The run holds a lock of its own while it lasts, taken before its row exists, so that a sweep never
    // mistakes it for a dead process's run. A campaign's run took it with the campaign's locks (`heldAs`).
    const holder = heldAs ?? (ctx.locks ? runLockName() : null);
    const lock = holder === null || heldAs !== undefined ? undefined : ((await ctx.locks?.acquire([holder])) ?? undefined);
    // Every run that opens closes the account's runs whose lock nobody holds (README, "Failure modes"): a campaign's
    // too, since it costs a look at the few running rows (a partial index) and at their holders' locks. A run
    // opening at the same moment is never taken for dead: its lock is held before its row exists.
    if (ctx.locks) await closeAbandonedRuns(ctx.db, ctx.locks, ctx.account, startedAt);
    const row = await ctx.db
      .insertInto("sync_runs")
      .values({ account: ctx.account, scope, rhythm, trigger: ctx.trigger, started_at: startedAt, outcome: "running", holder })
      .returning("id")
      .executeTakeFirstOrThrow();
    return new RunLedger(ctx.db, Number(row.id), startedAt, ctx, lock);
  }

  add(result: StreamResult): void {
    const totals = (this.streams[result.stream] ??= { fetched: 0, written: 0, rejected: 0, skipped: 0 });
    totals.fetched += result.fetched;
    totals.written += result.written;
    totals.rejected += result.rejected;
    totals.skipped += result.skipped;
    for (const [field, count] of Object.entries(result.fieldIssues)) this.fieldIssues[field] = (this.fieldIssues[field] ?? 0) + count;
    if (result.error) this.failures.push({ campaignUid: result.campaignUid, stream: result.stream, error: result.error });
  }

  fail(campaignUid: string | null, stream: string, error: Error): void {
    this.failures.push({ campaignUid, stream, error });
  }

  markAborted(): void {
    this.#aborted = true;
  }

  get rejected(): number {
    return Object.values(this.streams).reduce((sum, totals) => sum + totals.rejected, 0);
  }

  get skipped(): number {
    return Object.values(this.streams).reduce((sum, totals) => sum + totals.skipped, 0);
  }

  #outcome(): RunSummary["outcome"] {
    if (this.#aborted) return "aborted";
    // Failed when nothing could be fetched: a run whose other streams fetched nothing new is partial when one fails.
    if (this.failures.length > 0) return this.ctx.client.stats.answered > 0 ? "partial" : "failed";
    // Every stream finished, but a record that could not be placed (and what hung from it) is not in the warehouse.
    return this.rejected > 0 || this.skipped > 0 ? "partial" : "succeeded";
  }

  async close(): Promise<RunSummary> {
    const stats = this.ctx.client.stats;
    const finishedAt = new Date();
    const outcome = this.#outcome();
    const summary: RunSummary = {
      runId: this.runId,
      outcome,
      streams: this.streams,
      requests: stats.requests,
      retries: stats.retries,
      rejected: this.rejected,
      skipped: this.skipped,
      fieldIssues: this.fieldIssues,
      durationMs: finishedAt.getTime() - this.startedAt.getTime(),
      failures: this.failures,
    };
    await this.db
      .updateTable("sync_runs")
      .set({
        finished_at: finishedAt,
        outcome,
        counts: JSON.stringify(summary.streams),
        requests: summary.requests,
        retries: summary.retries,
        rejected: summary.rejected,
        skipped: summary.skipped,
        field_issues: JSON.stringify(summary.fieldIssues),
        errors: JSON.stringify(
          this.failures.map((failure) => ({ campaign_uid: failure.campaignUid, stream: failure.stream, message: failure.error.message })),
        ),
      })
      .where("id", "=", this.runId)
      .execute();
    await this.lock?.release();
    return summary;
  }
}

/**
 * Closes as aborted the account's runs still `running` whose process is gone:
 * no session holds the lock the run named as its holder (PostgreSQL released
 * it when that process's connection ended). Called when any run of the
 * account opens and when the worker starts, so a dead worker's runs are closed
 * by the next run. A worker sweeps every account's (`account` null): one
 * restarted under a new COLDSYNC_ACCOUNT would leave the old name's runs
 * `running` for ever, and whose process is gone does not depend on the account.
 * Sweeps at once close a row once: the update re-checks that it is still
 * running. Returns how many it closed.
 */
export async function closeAbandonedRuns(db: Kysely<Database>, locks: RunLocks, account: string | null, at: Date = new Date()): Promise<number> {
  // `running` as a literal, not a parameter: the partial index on running rows then serves whatever plan PostgreSQL picks (a generic plan knows no parameter values).
  const running = await db
    .selectFrom("sync_runs")
    .select(["id", "holder"])
    .$if(account !== null, (query) => query.where("account", "=", account as string))
    .where("outcome", "=", sql.lit("running"))
    .execute();
  if (running.length === 0) return 0;
  const held = await locks.held(db, running.flatMap((row) => (row.holder === null ? [] : [row.holder])));
  const abandoned = running.filter((row) => row.holder === null || !held.has(row.holder)).map((row) => row.id);
  if (abandoned.length === 0) return 0;
  const closed = await db
    .updateTable("sync_runs")
    .set({
      outcome: "aborted",
      finished_at: at,
      errors: JSON.stringify([{ campaign_uid: null, stream: "run", message: "the process running it stopped before it finished" }]),
    })
    .where("id", "in", abandoned)
    .where("outcome", "=", "running")
    .executeTakeFirst();
  // Not `abandoned.length`: a run that finished between the read and the update, or that another sweep closed, is not closed here.
  return Number(closed.numUpdatedRows);
}
