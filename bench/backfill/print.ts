import { STAGES, type Stage } from "../../src/stage-timings.ts";

/** What bench/backfill prints: one line per phase, then where the sync's time went. */

export interface PhaseResult {
  seconds: number;
  /** CPU time of the measured process itself (not the emulator's, nor PostgreSQL's); null where the server does the work. */
  cpuSeconds: number | null;
  /** Upstream records read (the write phases: records in the saved answers). */
  records?: number;
  /** Warehouse rows written (the write phases). */
  rows?: number;
  requests: number;
  peakRssMb: number;
  stages?: Record<Stage, number>;
}

export function printPhases(scale: string, phases: readonly (readonly [string, PhaseResult])[]): void {
  console.log(`\nbench/backfill, ${scale}: wall, this process's CPU, records/s, requests, peak RSS`);
  for (const [name, result] of phases) {
    const cpu = result.cpuSeconds === null ? "—" : result.cpuSeconds.toFixed(1);
    const records = result.records ?? result.rows ?? 0;
    const rate = `${Math.round(records / result.seconds)}${result.records === undefined ? " rows/s" : " rec/s"}`;
    console.log(
      `  ${name.padEnd(30)} ${result.seconds.toFixed(1).padStart(6)} s  cpu ${cpu.padStart(5)} s  ${rate.padStart(14)}  ${String(result.requests).padStart(5)} req  ${result.peakRssMb.toFixed(0).padStart(4)} MB`,
    );
  }
}

const LABELS: Record<Stage, string> = {
  fetchWait: "waiting for a page (summed over campaigns in flight)",
  jsonParse: "JSON parse",
  validation: "validation (tolerant zod reading)",
  mapping: "mapping records to rows",
  sqlBuild: "SQL build (dedupe, sort, array literals)",
  database: "database (queries in flight, summed)",
};
const CPU_STAGES: readonly Stage[] = ["jsonParse", "validation", "mapping", "sqlBuild"];

/** The stages the sync measured: CPU stages as a share of the process's CPU, waits in seconds summed over what waited at once. */
export function printBreakdown(sync: PhaseResult): void {
  if (!sync.stages || sync.cpuSeconds === null) return;
  const stages = sync.stages;
  const cpu = sync.cpuSeconds;
  console.log(`  where the sync's time went (wall ${sync.seconds.toFixed(1)} s, process CPU ${cpu.toFixed(1)} s):`);
  for (const stage of STAGES) {
    const seconds = stages[stage] / 1000;
    const share = CPU_STAGES.includes(stage) ? `  ${((100 * seconds) / cpu).toFixed(0).padStart(3)}% of CPU` : "";
    console.log(`    ${LABELS[stage].padEnd(56)} ${seconds.toFixed(2).padStart(7)} s${share}`);
  }
  const rest = cpu - CPU_STAGES.reduce((sum, stage) => sum + stages[stage] / 1000, 0);
  console.log(`    ${"other CPU (HTTP, driver, GC, bookkeeping)".padEnd(56)} ${rest.toFixed(2).padStart(7)} s  ${((100 * rest) / cpu).toFixed(0).padStart(3)}% of CPU`);
}
