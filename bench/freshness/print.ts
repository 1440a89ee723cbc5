import type { Target } from "../report.ts";
import { EVENT_STREAMS, type Figure } from "./lag.ts";
import type { FreshnessReport } from "./run.ts";

/** What bench/freshness prints: lag per worker and stream, requests a minute, the no-change count, then the targets. */

const STREAM_LABEL = { replies: "replies", link_clicks: "clicks", email_opens: "opens" } as const;

function seconds(figure: Figure | null): string {
  if (figure === null) return "—";
  return `${figure.lowerBound ? "≥ " : ""}${figure.seconds.toFixed(1)}`;
}

function duration(ms: number): string {
  const total = Math.round(ms / 1000);
  const days = Math.floor(total / 86_400);
  const clock = new Date((total % 86_400) * 1000).toISOString().slice(11, 19);
  return `${days}d ${clock}`;
}

const one = (value: number) => value.toFixed(1);

export function reportLines(report: FreshnessReport): string[] {
  const lines = [
    `bench/freshness: seed ${report.seed}, scale busy, two accounts, ${one(report.windowMs / 60_000)} min measured after the backfill, ` +
      `COLDSYNC_RATE_LIMIT=${report.rateLimit} (a budget of ${report.rateLimit * 60} requests a minute per worker)`,
    `  simulated window ${report.simWindow.from} .. ${report.simWindow.to}; real − simulated ${duration(report.offsetMs)} (moved ${(report.offsetDriftMs / 1000).toFixed(2)} s over the window)`,
    "",
    ...report.workers.map(
      (worker) =>
        `  ${worker.name.padEnd(9)} ${Object.entries(worker.settings).map(([name, value]) => `${name}=${value}`).join(" ")}; ` +
        `${worker.campaigns} campaigns, backfill ${worker.backfillSeconds.toFixed(0)} s`,
    ),
    "",
    `  lag in seconds of the events that happened in the window (≥: not in the warehouse ${(report.observedAfterMs / 1000).toFixed(0)} s after the window ended; a lower bound)`,
    "  worker     stream     events  held      p50       p95       max",
  ];
  for (const worker of report.workers) {
    const rows = [...EVENT_STREAMS.map((stream) => [STREAM_LABEL[stream], worker.lag[stream]] as const), ["all", worker.lagAll] as const];
    for (const [label, lag] of rows) {
      lines.push(
        `  ${worker.name.padEnd(10)} ${label.padEnd(9)} ${String(lag.events).padStart(6)} ${String(lag.held).padStart(5)} ` +
          `${seconds(lag.p50).padStart(9)} ${seconds(lag.p95).padStart(9)} ${seconds(lag.max).padStart(9)}`,
      );
    }
  }
  lines.push("", "  requests a minute in the window: total (events rhythm, leads rhythm, discovery); README formula when nothing changes");
  for (const worker of report.workers) {
    const rate = worker.perMinute;
    const formula = worker.formula;
    lines.push(
      `  ${worker.name.padEnd(10)} ${one(rate.total).padStart(6)} (${one(rate.events)}, ${one(rate.leads)}, ${one(rate.discovery)}); ` +
        `${worker.requests.total} requests; formula ${one(formula.events + formula.leads)} (events ${one(formula.events)}, leads ${one(formula.leads)})`,
    );
  }
  const tuned = report.workers[0];
  if (tuned && tuned.eventsIntervals.length > 0) {
    const intervals = tuned.eventsIntervals;
    const median = intervals[Math.floor((intervals.length - 1) / 2)] as number;
    lines.push(
      `  ${tuned.name} events cadence achieved in the window: median ${median.toFixed(0)} s, ` +
        `min ${(intervals[0] as number).toFixed(0)} s, max ${(intervals.at(-1) as number).toFixed(0)} s over ${intervals.length} intervals`,
    );
  }
  const change = report.noChange;
  lines.push(
    "",
    `  no-change cycles, simulated clock frozen (caught up ${(change.catchUpMs / 1000).toFixed(0)} s after the freeze): ` +
      `${change.ticks} ticks of the events scheduler in ${(change.windowMs / 1000).toFixed(0)} s, ${change.campaigns} started campaigns that can still send`,
    `    events requests: formula 3 × ${change.campaigns} × ${change.ticks} = ${change.expected}; measured ${change.measured.events} ` +
      `in ${change.runs.runs} events runs (${change.runs.runs > 0 ? (change.measured.events / change.runs.runs).toFixed(2) : "—"} a run; ` +
      `the runs counted ${change.runs.requests}${change.runs.failed > 0 ? `; ${change.runs.failed} failed` : ""})`,
    `    other requests in the window: leads rhythm ${change.measured.leads}, discovery ${change.measured.discovery}`,
  );
  for (const worker of report.workers) {
    if (worker.exitCode !== 0) lines.push(`  ${worker.name} exited ${worker.exitCode} on SIGTERM`);
    for (const line of worker.errorLines) lines.push(`  ${worker.name} error: ${line.slice(0, 200)}`);
  }
  return lines;
}

export function targetsOf(report: FreshnessReport): Target[] {
  const [tuned, baseline] = report.workers;
  if (!tuned || !baseline) throw new Error("the report lacks a worker");
  const lagOf = (figure: Figure | null) => ({ value: figure?.seconds ?? Number.NaN, lowerBound: figure?.lowerBound ?? false });
  const change = report.noChange;
  return [
    { name: "tuned p95 reply lag s", ...lagOf(tuned.lag.replies.p95), limit: 90, lowerIsBetter: true },
    { name: "tuned requests a minute", value: tuned.perMinute.total, limit: report.rateLimit * 60, lowerIsBetter: true },
    { name: "tuned no-change events requests", value: change.measured.events, limit: change.expected, lowerIsBetter: true, equal: true },
    { name: "tuned no-change requests an events run", value: change.runs.runs > 0 ? change.measured.events / change.runs.runs : Number.NaN, limit: 3, lowerIsBetter: true, equal: true, informational: true },
    { name: "tuned p95 lag s, all three streams", ...lagOf(tuned.lagAll.p95), limit: 90, lowerIsBetter: true, informational: true },
    { name: "baseline p95 reply lag s", ...lagOf(baseline.lag.replies.p95), limit: 90, lowerIsBetter: true, informational: true },
    { name: "baseline requests a minute", value: baseline.perMinute.total, limit: report.rateLimit * 60, lowerIsBetter: true, informational: true },
  ];
}
