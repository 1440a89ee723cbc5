import type { ClockMode, GroundTruth } from "../../src/emulator/options.ts";
import { UpstreamClient } from "../../src/upstream/client.ts";
import { API_KEY_HEADER, PARAMS, PATHS } from "../../src/upstream/endpoints.ts";
import type { UpstreamEvent } from "./lag.ts";

/**
 * The emulator seen from the bench, through its admin routes (never rate
 * limited, faulted or counted by the workers): the simulated now, the clock,
 * the ground truth, and the events of an account with their own times.
 */

async function admin<T>(url: string, path: string, init: { body?: unknown; apiKey?: string } = {}): Promise<T> {
  const response = await fetch(`${url}${path}`, {
    method: init.body === undefined ? "GET" : "POST",
    headers: { ...(init.body === undefined ? {} : { "content-type": "application/json" }), ...(init.apiKey ? { [API_KEY_HEADER]: init.apiKey } : {}) },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  if (!response.ok) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

export interface ClockReading {
  simMs: number;
  /** Real time halfway through the request that read it. */
  realMs: number;
}

/** The simulated now (an advance by 0 s answers it, after the wall clock caught up), and the real time it was read at. */
export async function readClock(url: string): Promise<ClockReading> {
  const sent = Date.now();
  const report = await admin<{ now: string }>(url, "/admin/advance", { body: { seconds: 0 } });
  return { simMs: Date.parse(report.now), realMs: (sent + Date.now()) / 2 };
}

export async function setClock(url: string, clock: ClockMode): Promise<void> {
  await admin(url, "/admin/settings", { body: { clock } });
}

/**
 * How many campaigns of the account run the events rhythm every COLDSYNC_EVENTS_EVERY, by the README's
 * definition (started, and can still send: running or paused), read from the raw campaign listing, so that
 * the no-change limit does not rest on the engine's own reading of the campaigns.
 */
export async function liveStartedCampaignCount(url: string, apiKey: string): Promise<number> {
  let count = 0;
  for (let offset = 0; ; offset += 100) {
    const response = await fetch(`${url}${PATHS.campaigns}?${PARAMS.offset}=${offset}&${PARAMS.limit}=100`, { headers: { [API_KEY_HEADER]: apiKey } });
    if (!response.ok) throw new Error(`the campaign listing answered ${response.status}: ${await response.text()}`);
    const page = (await response.json()) as { data: { status?: unknown }[]; total: number };
    count += page.data.filter((campaign) => campaign.status === "running" || campaign.status === "paused").length;
    if (page.data.length === 0 || offset + page.data.length >= page.total) return count;
  }
}

export function groundTruth(url: string, apiKey: string): Promise<GroundTruth> {
  return admin<GroundTruth>(url, "/admin/truth", { apiKey });
}

/** The event time at the end of a click's (schedule|link|time) or an open's (schedule|time) truth key. */
function timeOfKey(key: string): number {
  return Date.parse(key.slice(key.lastIndexOf("|") + 1));
}

/**
 * Every reply, click and open of the account with its own (simulated) time.
 * Clicks and opens carry their time in their truth key; a reply's key is its
 * id, so replies are read from the API: one listing per campaign, with a
 * client of the bench's own (the workers' request counts never see it).
 */
export async function upstreamEvents(url: string, apiKey: string): Promise<UpstreamEvent[]> {
  const truth = await groundTruth(url, apiKey);
  const events: UpstreamEvent[] = [
    ...truth.keys.link_clicks.map((key) => ({ stream: "link_clicks" as const, key, happenedSimMs: timeOfKey(key) })),
    ...truth.keys.email_opens.map((key) => ({ stream: "email_opens" as const, key, happenedSimMs: timeOfKey(key) })),
  ];
  const client = new UpstreamClient({ baseUrl: url, apiKey, requestsPerSecond: 1_000, concurrency: 4 });
  try {
    for await (const page of client.pages("campaigns", {})) {
      for (const { value: campaign } of page.records) {
        const listing = await client.listReplies(campaign.uid);
        for (const { value: reply } of listing.records) {
          if (typeof reply.received_on === "string") events.push({ stream: "replies", key: String(reply.id), happenedSimMs: Date.parse(reply.received_on) });
        }
      }
    }
  } finally {
    await client.close();
  }
  const replies = events.filter((event) => event.stream === "replies").length;
  if (replies !== truth.counts.replies) throw new Error(`the reply listings hold ${replies} replies, the ground truth ${truth.counts.replies}`);
  return events;
}
