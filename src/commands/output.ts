import Table from "cli-table3";
import cliProgress from "cli-progress";
import { pino } from "pino";
import type { Config } from "../config.ts";
import { createLogger, type Logger } from "../logger.ts";
import type { FullSyncProgress } from "../sync/runs.ts";
import type { RunSummary } from "../sync/run-ledger.ts";
import { secretsOf } from "../secrets.ts";

/** Terminal output shared by the commands: tables, the progress display and the run summary. */

export function table(head: string[], rows: (string | number | null)[][]): string {
  const rendered = new Table({
    head,
    style: { head: [], border: [] },
    // No rule between body rows: long tables stay readable.
    chars: { mid: "", "left-mid": "", "mid-mid": "", "right-mid": "" },
  });
  for (const row of rows) rendered.push(row.map((cell) => (cell === null ? "" : String(cell))));
  return rendered.toString();
}

/** Commands print results on stdout, so their logs go to stderr. */
export function commandLogger(config: Config): Logger {
  return createLogger({ level: config.logLevel, secrets: secretsOf(config), destination: pino.destination(2) });
}

export interface ProgressDisplay {
  update(progress: FullSyncProgress): void;
  stop(): void;
}

/** A progress bar on a terminal; elsewhere (CI, logs) a plain line every few seconds. */
export function progressDisplay(logger: Logger): ProgressDisplay {
  const startedAt = Date.now();
  const rate = (records: number) => Math.round(records / Math.max(1, (Date.now() - startedAt) / 1000));
  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      { format: "campaigns {bar} {value}/{total} | {records} records | {rate} records/s", stream: process.stderr, hideCursor: true },
      cliProgress.Presets.shades_classic,
    );
    let started = false;
    return {
      update: (progress) => {
        if (!started) {
          bar.start(progress.campaignsTotal, 0, { records: 0, rate: 0 });
          started = true;
        }
        bar.setTotal(progress.campaignsTotal);
        bar.update(progress.campaignsDone, { records: progress.records, rate: rate(progress.records) });
      },
      stop: () => {
        if (started) bar.stop();
      },
    };
  }
  let lastLineAt = 0;
  return {
    update: (progress) => {
      const finished = progress.campaignsTotal > 0 && progress.campaignsDone === progress.campaignsTotal;
      if (!finished && Date.now() - lastLineAt < 5_000) return;
      lastLineAt = Date.now();
      logger.info({ ...progress, recordsPerSecond: rate(progress.records) }, "sync progress");
    },
    stop: () => undefined,
  };
}

const plural = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

export function runSummaryText(summary: RunSummary): string {
  const streams = table(
    ["stream", "fetched", "written", "rejected", "skipped"],
    Object.entries(summary.streams).map(([stream, totals]) => [stream, totals.fetched, totals.written, totals.rejected, totals.skipped]),
  );
  const lines = [
    streams,
    `run ${summary.runId}: ${summary.outcome} in ${(summary.durationMs / 1000).toFixed(1)} s, ${summary.requests} requests, ${summary.retries} retries`,
  ];
  if (summary.rejected > 0) {
    const below = summary.skipped > 0 ? `, with ${plural(summary.skipped, "record")} below it that could not be placed either` : "";
    lines.push(`${plural(summary.rejected, "record")} could not be placed (a key field missing or unusable): see rejected_records${below}`);
  }
  const deviations = Object.entries(summary.fieldIssues).sort(([a], [b]) => a.localeCompare(b));
  if (deviations.length > 0) {
    const total = deviations.reduce((sum, [, count]) => sum + count, 0);
    lines.push(
      `${plural(total, "field")} deviated from the spec and were kept as NULL or coerced (see the field_issues view): ${deviations.map(([field, count]) => `${field} ${count}`).join(", ")}`,
    );
  }
  for (const failure of summary.failures) {
    lines.push(`failed: ${failure.campaignUid ?? "account"} ${failure.stream}: ${failure.error.message}`);
  }
  return lines.join("\n");
}
