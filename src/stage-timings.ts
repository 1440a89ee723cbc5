/**
 * Where a sync's time goes, summed per stage in milliseconds, for the
 * backfill benchmark's breakdown. Off unless a benchmark turns it on: a
 * production call pays one boolean test, never a clock read.
 *
 * The CPU stages (parse, validation, mapping, SQL build) run on the event
 * loop, so their sums are time the process spent on them. The waits (fetch,
 * database) are summed over everything waiting at once: with campaigns synced
 * side by side they may add up to more than the wall time.
 */

export const STAGES = ["fetchWait", "jsonParse", "validation", "mapping", "sqlBuild", "database"] as const;
export type Stage = (typeof STAGES)[number];

let enabled = false;
const totals: Record<Stage, number> = { fetchWait: 0, jsonParse: 0, validation: 0, mapping: 0, sqlBuild: 0, database: 0 };

export function enableStageTimings(): void {
  enabled = true;
}

/** A start mark for addStage(); 0 when timings are off. */
export function stageStart(): number {
  return enabled ? performance.now() : 0;
}

/** Adds the time since `start` (from stageStart()) to `stage`. */
export function addStage(stage: Stage, start: number): void {
  if (enabled) totals[stage] += performance.now() - start;
}

/** Adds a duration measured elsewhere (a query's, as Kysely's log reports it). */
export function addStageMs(stage: Stage, ms: number): void {
  if (enabled) totals[stage] += ms;
}

export function stageTimingsEnabled(): boolean {
  return enabled;
}

export function stageTotals(): Record<Stage, number> {
  return { ...totals };
}
