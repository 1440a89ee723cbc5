import { METRIC_NAMES } from "../../src/http/metrics.ts";
import { PATHS } from "../../src/upstream/endpoints.ts";

/**
 * Upstream requests as a worker counts them: `coldsync_upstream_requests_total`
 * on its /metrics (every attempt, by endpoint, method and status), read
 * before and after a window. Endpoints are grouped by the rhythm that sends
 * them: the events rhythm (replies, click and open tails, leads refreshed one
 * by one), the leads rhythm (detail, leads walk, sequences) and discovery
 * (workspaces, domains, contact lists, the campaign listing). A leads walk
 * also sends #12, to confirm a lead it did not see is gone (one per such lead,
 * 20 at most a walk): the endpoint cannot tell those from refreshes, so they
 * count as events; a window where no lead is deleted has none.
 */

export type RequestGroup = "events" | "leads" | "discovery";
export type RequestCounts = Record<RequestGroup | "total", number>;

const GROUP_OF_ENDPOINT: ReadonlyMap<string, RequestGroup> = new Map([
  [PATHS.replies, "events"],
  [PATHS.linkClickEvents, "events"],
  [PATHS.emailOpenEvents, "events"],
  [PATHS.lead, "events"],
  [PATHS.campaign, "leads"],
  [PATHS.leads, "leads"],
  [PATHS.emailSequence, "leads"],
]);

const SAMPLE = new RegExp(`^${METRIC_NAMES.upstreamRequests}\\{([^}]*)\\}\\s+(\\S+)`);

/** Requests per group in a Prometheus text exposition. */
export function requestCounts(exposition: string): RequestCounts {
  const counts: RequestCounts = { events: 0, leads: 0, discovery: 0, total: 0 };
  for (const line of exposition.split("\n")) {
    const match = SAMPLE.exec(line);
    if (!match) continue;
    const endpoint = /(?:^|,)endpoint="([^"]*)"/.exec(match[1] ?? "")?.[1] ?? "";
    const value = Number(match[2]);
    counts[GROUP_OF_ENDPOINT.get(endpoint) ?? "discovery"] += value;
    counts.total += value;
  }
  return counts;
}

export function difference(before: RequestCounts, after: RequestCounts): RequestCounts {
  return { events: after.events - before.events, leads: after.leads - before.leads, discovery: after.discovery - before.discovery, total: after.total - before.total };
}

export function perMinute(counts: RequestCounts, ms: number): RequestCounts {
  const minutes = ms / 60_000;
  return { events: counts.events / minutes, leads: counts.leads / minutes, discovery: counts.discovery / minutes, total: counts.total / minutes };
}

/** One scrape of a worker's /metrics (the bench's workers run without COLDSYNC_HTTP_TOKEN). */
export async function scrapeRequests(workerUrl: string): Promise<RequestCounts> {
  const response = await fetch(`${workerUrl}/metrics`);
  if (!response.ok) throw new Error(`GET ${workerUrl}/metrics answered ${response.status}`);
  return requestCounts(await response.text());
}
