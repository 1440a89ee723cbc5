import { leadsCadenceOf, type Cadence } from "../../queue/cadence.ts";
import { EVENT_STREAM_NAMES, isTerminal } from "../../sync/campaign-sync.ts";
import { countsTowardLag } from "../../sync/status.ts";

/**
 * When is a campaign "behind"? The worker reads a campaign's streams again
 * once their last complete scan is older than their rhythm's cadence
 * (src/queue/cadence.ts): the leads rhythm follows the campaign's status and
 * is noticed at the next discovery; the events rhythm (replies, clicks, opens)
 * runs every COLDSYNC_EVENTS_EVERY and is noticed by its own tick. The job then
 * waits in the queue and runs for a while. So a stream is behind when its last
 * complete scan is older than its cadence plus the period in which that is
 * noticed plus a few minutes of slack, and a campaign is behind when one of
 * the streams that count is; anything sooner is the schedule working as
 * designed.
 */

/** Queue wait and run time a healthy fleet may add on top of the schedule. */
const SLACK_MS = 5 * 60_000;

const isEventStream = (stream: string) => EVENT_STREAM_NAMES.includes(stream);

/** How often the worker reads `stream` of a campaign in this status. */
export function streamCadenceMs(stream: string, status: string | null, cadence: Cadence): number {
  if (isEventStream(stream) && cadence.eventsEveryMs !== undefined) return isTerminal(status) ? cadence.terminalEveryMs : cadence.eventsEveryMs;
  return leadsCadenceOf(status, cadence);
}

/** How old `stream`'s last complete scan may get before it counts as behind. */
export function behindAfterMs(stream: string, status: string | null, cadence: Cadence): number {
  const noticedWithin = isEventStream(stream) && cadence.eventsEveryMs !== undefined ? cadence.eventsEveryMs : cadence.discoverEveryMs;
  return streamCadenceMs(stream, status, cadence) + noticedWithin + SLACK_MS;
}

export type Freshness = "fresh" | "behind" | "never";

export interface CampaignFreshness {
  freshness: Freshness;
  /** The streams older than their allowance. */
  behind: string[];
}

/** A campaign's freshness from its streams' last complete scans (those campaignLag() counts). */
export function freshnessOf(
  campaign: { status: string | null; streams: Record<string, Date | null>; finalWalksDone: boolean },
  cadence: Cadence,
  now: Date,
): CampaignFreshness {
  const { status, streams, finalWalksDone } = campaign;
  const counted = Object.entries(streams).filter(([stream]) => countsTowardLag(stream, finalWalksDone));
  if (counted.length === 0 || counted.some(([, at]) => at === null)) return { freshness: "never", behind: [] };
  const behind = counted.filter(([stream, at]) => now.getTime() - (at as Date).getTime() > behindAfterMs(stream, status, cadence)).map(([stream]) => stream);
  return { freshness: behind.length > 0 ? "behind" : "fresh", behind };
}
