import { sql, type Kysely } from "kysely";
import type { Database, RunOutcome } from "../../warehouse/database.ts";

/**
 * The runs panel: the last runs (when, how long, how they ended) and the
 * upstream requests per minute they made, next to the account's budget.
 *
 * sync_runs and verifications record a run's requests when it finishes, not
 * as they happen, so each finished run's requests are spread evenly over its
 * duration. That is exact for the total and close for the shape (the client
 * paces requests evenly within the budget); a run still in progress shows up
 * when it ends.
 */

export interface RunBar {
  id: number;
  scope: string | null;
  trigger: string;
  outcome: RunOutcome;
  startedAt: Date;
  finishedAt: Date | null;
  durationMs: number;
  requests: number;
  errors: number;
  firstError: string | null;
  /** sync_runs.field_issues: what deviated from the spec in the run, per field. */
  fieldIssues: Record<string, number>;
}

export async function recentRuns(db: Kysely<Database>, account: string, limit: number, now = new Date()): Promise<RunBar[]> {
  const rows = await db
    .selectFrom("sync_runs")
    .select([
      "id",
      "scope",
      "trigger",
      "outcome",
      "started_at",
      "finished_at",
      "requests",
      "field_issues",
      sql<number>`CASE WHEN jsonb_typeof(errors) = 'array' THEN jsonb_array_length(errors) ELSE 0 END`.as("errors"),
      sql<string | null>`errors->0->>'message'`.as("first_error"),
    ])
    .where("account", "=", account)
    .orderBy("id", "desc")
    .limit(limit)
    .execute();
  return rows.reverse().map((row) => ({
    id: row.id,
    scope: row.scope,
    trigger: row.trigger,
    outcome: row.outcome,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    durationMs: Math.max(0, (row.finished_at ?? now).getTime() - row.started_at.getTime()),
    requests: row.requests,
    errors: Number(row.errors),
    firstError: row.first_error,
    fieldIssues: row.field_issues,
  }));
}

export interface RequestSpan {
  startedAt: Date;
  finishedAt: Date;
  requests: number;
}

export interface MinuteOfRequests {
  /** Start of the minute. */
  minute: Date;
  requests: number;
}

const MINUTE_MS = 60_000;

/** Requests per minute over the `minutes` whole minutes up to `now` (the current one included), each span spread evenly. */
export function spreadPerMinute(spans: readonly RequestSpan[], now: Date, minutes: number): MinuteOfRequests[] {
  const lastMinute = Math.floor(now.getTime() / MINUTE_MS) * MINUTE_MS;
  const first = lastMinute - (minutes - 1) * MINUTE_MS;
  const buckets = Array.from({ length: minutes }, () => 0);
  for (const span of spans) {
    const start = span.startedAt.getTime();
    const end = Math.max(span.finishedAt.getTime(), start);
    if (span.requests <= 0) continue;
    if (end === start) {
      // A run that took no measurable time made its requests in one instant.
      const index = Math.floor((start - first) / MINUTE_MS);
      if (index >= 0 && index < minutes) buckets[index] = (buckets[index] ?? 0) + span.requests;
      continue;
    }
    for (let index = Math.max(0, Math.floor((start - first) / MINUTE_MS)); index < minutes; index += 1) {
      const bucketStart = first + index * MINUTE_MS;
      if (bucketStart >= end) break;
      const overlap = Math.min(end, bucketStart + MINUTE_MS) - Math.max(start, bucketStart);
      if (overlap > 0) buckets[index] = (buckets[index] ?? 0) + (span.requests * overlap) / (end - start);
    }
  }
  return buckets.map((requests, index) => ({ minute: new Date(first + index * MINUTE_MS), requests: Math.round(requests * 10) / 10 }));
}

/** Finished sync and verification runs that overlap the window, as spans of requests. */
export async function requestsPerMinute(db: Kysely<Database>, account: string, minutes: number, now = new Date()): Promise<MinuteOfRequests[]> {
  const windowStart = new Date(Math.floor(now.getTime() / MINUTE_MS) * MINUTE_MS - (minutes - 1) * MINUTE_MS);
  const [runs, verifications] = await Promise.all([
    db
      .selectFrom("sync_runs")
      .select(["started_at", "finished_at", "requests"])
      .where("account", "=", account)
      .where("requests", ">", 0)
      .where("finished_at", ">=", windowStart)
      .execute(),
    db
      .selectFrom("verifications")
      .select(["started_at", "finished_at", "requests"])
      .where("account", "=", account)
      .where("requests", ">", 0)
      .where("finished_at", ">=", windowStart)
      .execute(),
  ]);
  const spans = [...runs, ...verifications].flatMap((row) =>
    row.finished_at === null ? [] : [{ startedAt: row.started_at, finishedAt: row.finished_at, requests: row.requests }],
  );
  return spreadPerMinute(spans, now, minutes);
}
