/**
 * Lag of the events that happened upstream in the measured window, from the
 * event's own time to the moment the warehouse first held it (the
 * `event_freshness` view's definition: `_first_seen_at` − the event's time).
 *
 * The emulator's event times are simulated: with `--clock wall` simulated time
 * runs at real speed from 2026-06-01, so an event's real time is its simulated
 * time plus the offset (real now − simulated now), measured once.
 *
 * An event the warehouse did not hold when the run looked for the last time
 * (`observedUntilMs`) counts, censored: its lag is at least
 * `observedUntilMs` − its real time. Leaving it out would flatter a worker
 * that had not read it yet.
 */

export const EVENT_STREAMS = ["replies", "link_clicks", "email_opens"] as const;
export type EventStream = (typeof EVENT_STREAMS)[number];

export interface UpstreamEvent {
  stream: EventStream;
  /** In the ground truth's key format (replies: id; clicks: schedule|link|time; opens: schedule|time). */
  key: string;
  /** The event's own time, simulated (ms since the epoch). */
  happenedSimMs: number;
}

export interface Lag {
  seconds: number;
  /** Not in the warehouse by the end: `seconds` is a lower bound. */
  censored: boolean;
}

export interface Figure {
  seconds: number;
  /** Only a lower bound: censored events lie at or below this rank. */
  lowerBound: boolean;
}

export interface StreamLag {
  events: number;
  /** Events the warehouse held by the end. */
  held: number;
  p50: Figure | null;
  p95: Figure | null;
  max: Figure | null;
}

export interface LagWindow {
  fromSimMs: number;
  toSimMs: number;
  /** Real time − simulated time. */
  offsetMs: number;
  /** When the warehouse was read for the last time (real ms). */
  observedUntilMs: number;
}

/** Per stream, the lag of every upstream event of the window; `heldAt` maps a stream's keys to their `_first_seen_at` (real ms). */
export function lagsOf(events: readonly UpstreamEvent[], heldAt: Record<EventStream, ReadonlyMap<string, number>>, window: LagWindow): Record<EventStream, Lag[]> {
  const lags = { replies: [], link_clicks: [], email_opens: [] } as Record<EventStream, Lag[]>;
  for (const event of events) {
    if (event.happenedSimMs < window.fromSimMs || event.happenedSimMs >= window.toSimMs) continue;
    const happenedMs = event.happenedSimMs + window.offsetMs;
    const synced = heldAt[event.stream].get(event.key);
    lags[event.stream].push(
      synced === undefined ? { seconds: (window.observedUntilMs - happenedMs) / 1000, censored: true } : { seconds: (synced - happenedMs) / 1000, censored: false },
    );
  }
  return lags;
}

/**
 * The q-quantile with linear interpolation between ranks (PostgreSQL's
 * percentile_cont, as `coldsync status` computes it). Censored lags only grow
 * when known, so the figure is exact when every censored lag ranks above the
 * two it is interpolated from, and a lower bound otherwise.
 */
export function quantile(lags: readonly Lag[], q: number): Figure | null {
  if (lags.length === 0) return null;
  const sorted = [...lags].sort((a, b) => a.seconds - b.seconds);
  const position = q * (sorted.length - 1);
  const low = Math.floor(position);
  const high = Math.ceil(position);
  const lowLag = sorted[low] as Lag;
  const highLag = sorted[high] as Lag;
  const seconds = lowLag.seconds + (highLag.seconds - lowLag.seconds) * (position - low);
  return { seconds, lowerBound: sorted.slice(0, high + 1).some((lag) => lag.censored) };
}

export function summarize(lags: readonly Lag[]): StreamLag {
  return {
    events: lags.length,
    held: lags.filter((lag) => !lag.censored).length,
    p50: quantile(lags, 0.5),
    p95: quantile(lags, 0.95),
    max: quantile(lags, 1),
  };
}
