import { clip } from "../clip.ts";
import type { Config } from "../config.ts";
import { campaignStatus, deviationsOf, eventLag, fieldIssueCounts, lastRuns, rejectedCounts } from "../sync/status.ts";
import { openWarehouse } from "../warehouse/connect.ts";
import { requireMigrated } from "../warehouse/migrate.ts";
import { table } from "./output.ts";

function lag(seconds: number | null): string {
  if (seconds === null) return "never";
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7_200) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3_600).toFixed(1)} h`;
}

/** Each campaign stream's last complete scan, shown as its age. */
const STREAM_COLUMNS = [
  ["campaign_detail", "detail"],
  ["leads", "leads"],
  ["replies", "replies"],
  ["link_clicks", "clicks"],
  ["email_opens", "opens"],
  ["email_sequences", "sequences"],
] as const;

const when = (date: Date | null | undefined) => (date ? `${date.toISOString().slice(0, 19)}Z` : "—");

/** `coldsync status`: per campaign, its counts, each stream's last complete scan and its lag; then freshness, field issues, rejected records and the last runs. */
export async function printStatus(config: Config): Promise<void> {
  const warehouse = await openWarehouse({ ...config.warehouse, createSchema: false });
  try {
    await requireMigrated(warehouse);
    const campaigns = await campaignStatus(warehouse.db, config.account);
    const now = Date.now();
    const age = (date: Date | null | undefined) => (date ? lag(Math.round((now - date.getTime()) / 1000)) : "never");
    console.log(
      table(
        ["campaign", "status", "leads", "replies", "clicks", "opens", ...STREAM_COLUMNS.map(([, title]) => `${title} synced`), "lag"],
        campaigns.map((row) => [
          row.name ? clip(`${row.campaign_uid} ${row.name}`, 48) : row.campaign_uid,
          row.status,
          row.leads,
          row.replies,
          row.link_clicks,
          row.email_opens,
          ...STREAM_COLUMNS.map(([stream]) => age(row.streams[stream])),
          lag(row.lag_seconds),
        ]),
      ),
    );
    const [issues, rejected, freshness] = await Promise.all([
      fieldIssueCounts(warehouse.db, config.account),
      rejectedCounts(warehouse.db, config.account),
      eventLag(warehouse.db, config.account),
    ]);
    const seconds = (value: number | null) => (value === null ? "—" : lag(Math.round(value)));
    console.log(
      freshness.length === 0
        ? "freshness: no event happened in the last 24 hours"
        : `freshness (from an event to the warehouse, events of the last 24 hours):\n${table(
            ["stream", "events", "p50", "p95"],
            freshness.map((row) => [row.stream, row.events, seconds(row.p50), seconds(row.p95)]),
          )}`,
    );
    console.log(
      issues.length === 0
        ? "field issues: none (every field read as the spec describes it)"
        : `field issues (rows whose field deviated from the spec, kept as NULL or coerced; see the field_issues view):\n${table(
            ["table", "field", "rows"],
            issues.map((issue) => [issue.table_name, issue.field, issue.rows]),
          )}`,
    );
    console.log(
      rejected.length === 0
        ? "rejected records: none"
        : `rejected records still met (no usable key; see rejected_records):\n${table(
            ["stream", "records", "records below them"],
            rejected.map((row) => [row.stream, row.records, row.skipped]),
          )}`,
    );
    const runs = await lastRuns(warehouse.db, config.account);
    console.log(
      table(
        ["run", "trigger", "scope", "started", "seconds", "outcome", "requests", "retries", "rejected", "deviations"],
        runs.map((run) => [
          run.id,
          run.trigger,
          run.scope ?? "account",
          when(run.started_at),
          run.finished_at ? ((run.finished_at.getTime() - run.started_at.getTime()) / 1000).toFixed(1) : "running",
          run.outcome,
          run.requests,
          run.retries,
          run.rejected,
          deviationsOf(run.field_issues),
        ]),
      ),
    );
  } finally {
    await warehouse.destroy();
  }
}
