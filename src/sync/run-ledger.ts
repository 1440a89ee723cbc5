import type { Kysely } from "kysely";
import type { Database, RunOutcome } from "../warehouse/database.ts";
import type { RunTrigger, SyncContext } from "./context.ts";
import type { StreamResult } from "./engine.ts";

/**
 * One row of `sync_runs` per run: opened when the run starts, closed with its
 * outcome, counts per stream, requests, retries, rejected records and errors.
 */

export interface StreamTotals {
  fetched: number;
  written: number;
  rejected: number;
}

export interface RunFailure {
  campaignUid: string | null;
  stream: string;
  error: Error;
}

export interface RunSummary {
  runId: number;
  outcome: Exclude<RunOutcome, "running">;
  streams: Record<string, StreamTotals>;
  requests: number;
  retries: number;
  rejected: number;
  durationMs: number;
  failures: RunFailure[];
}

export class RunLedger {
  readonly streams: Record<string, StreamTotals> = {};
  readonly failures: RunFailure[] = [];
  #aborted = false;

  private constructor(
    private readonly db: Kysely<Database>,
    readonly runId: number,
    private readonly startedAt: Date,
    private readonly ctx: SyncContext,
  ) {}

  /** `ctx.client` must be the run's own view (UpstreamClient#tallied), whose counts are the run's. */
  static async open(ctx: SyncContext, scope: string | null, trigger: RunTrigger = ctx.trigger): Promise<RunLedger> {
    const startedAt = new Date();
    // Runs of one scope never overlap (the worker leases campaigns; discovery is one scheduler), so a
    // row of the same scope still "running" belongs to a process that died before it could close it.
    await ctx.db
      .updateTable("sync_runs")
      .set({
        outcome: "aborted",
        finished_at: startedAt,
        errors: JSON.stringify([{ campaign_uid: scope, stream: "run", message: "the process running it stopped before it finished" }]),
      })
      .where("account", "=", ctx.account)
      .where("trigger", "=", trigger)
      .where("outcome", "=", "running")
      .where((eb) => (scope === null ? eb("scope", "is", null) : eb("scope", "=", scope)))
      .execute();
    const row = await ctx.db
      .insertInto("sync_runs")
      .values({ account: ctx.account, scope, trigger, started_at: startedAt, outcome: "running" })
      .returning("id")
      .executeTakeFirstOrThrow();
    return new RunLedger(ctx.db, Number(row.id), startedAt, ctx);
  }

  add(result: StreamResult): void {
    const totals = (this.streams[result.stream] ??= { fetched: 0, written: 0, rejected: 0 });
    totals.fetched += result.fetched;
    totals.written += result.written;
    totals.rejected += result.rejected;
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

  async close(): Promise<RunSummary> {
    const stats = this.ctx.client.stats;
    const finishedAt = new Date();
    const outcome: RunSummary["outcome"] = this.#aborted
      ? "aborted"
      : this.failures.length === 0
        ? "succeeded"
        : Object.keys(this.streams).length > 0 && Object.values(this.streams).some((totals) => totals.fetched > 0)
          ? "partial"
          : "failed";
    const summary: RunSummary = {
      runId: this.runId,
      outcome,
      streams: this.streams,
      requests: stats.requests,
      retries: stats.retries,
      rejected: this.rejected,
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
        errors: JSON.stringify(
          this.failures.map((failure) => ({ campaign_uid: failure.campaignUid, stream: failure.stream, message: failure.error.message })),
        ),
      })
      .where("id", "=", this.runId)
      .execute();
    return summary;
  }
}
