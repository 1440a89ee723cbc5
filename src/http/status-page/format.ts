/** How the page writes times, durations and counts: short, and the same everywhere. */

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export function formatDuration(ms: number): string {
  if (ms < SECOND) return `${Math.round(ms)} ms`;
  if (ms < 10 * SECOND) return `${(ms / SECOND).toFixed(1)} s`;
  if (ms < MINUTE) return `${Math.round(ms / SECOND)} s`;
  if (ms < HOUR) return `${Math.floor(ms / MINUTE)} min${withRest(Math.round((ms % MINUTE) / SECOND), "s", ms < 10 * MINUTE)}`;
  if (ms < DAY) return `${Math.floor(ms / HOUR)} h${withRest(Math.round((ms % HOUR) / MINUTE), "min", ms < 10 * HOUR)}`;
  return `${Math.floor(ms / DAY)} d${withRest(Math.round((ms % DAY) / HOUR), "h", ms < 10 * DAY)}`;
}

function withRest(amount: number, unit: string, show: boolean): string {
  return show && amount > 0 ? ` ${amount} ${unit}` : "";
}

/** One unit only, for tight cells: 40 s, 6 min, 3 h, 2 d. */
export function formatAge(ms: number): string {
  if (ms < MINUTE) return `${Math.max(0, Math.round(ms / SECOND))} s`;
  if (ms < HOUR) return `${Math.floor(ms / MINUTE)} min`;
  if (ms < DAY) return `${Math.floor(ms / HOUR)} h`;
  return `${Math.floor(ms / DAY)} d`;
}

export function formatAgo(at: Date, now: Date): string {
  const ms = now.getTime() - at.getTime();
  if (ms < 5 * SECOND) return "just now";
  return `${formatDuration(ms)} ago`;
}

/** A UTC time people read in tooltips: 2026-05-01 09:00:00 UTC. */
export function formatUtc(at: Date): string {
  return `${at.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** HH:MM in UTC, for axis labels. */
export function formatClock(at: Date): string {
  return at.toISOString().slice(11, 16);
}

export function formatCount(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

/** Compact axis numbers: 950, 1.2k, 12k, 1.5M. */
export function formatShort(value: number): string {
  if (value < 1_000) return String(Math.round(value * 10) / 10);
  if (value < 1_000_000) return `${Math.round(value / 100) / 10}k`;
  return `${Math.round(value / 100_000) / 10}M`;
}

export function formatRate(rate: number | null): string {
  return rate === null ? "—" : `${(rate * 100).toFixed(1)} %`;
}
