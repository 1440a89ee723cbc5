import { sql, type Kysely } from "kysely";
import type { Config } from "../config.ts";
import type { Logger } from "../logger.ts";
import { hasStarted, isTerminal } from "../sync/campaign-sync.ts";
import type { Database } from "../warehouse/database.ts";
import { eventsCadenceOf, leadsCadenceOf, type Cadence } from "./cadence.ts";

/**
 * Whether the account's request budget (COLDSYNC_RATE_LIMIT, shared by every
 * worker) covers the configured cadences. The events rhythm is served first
 * (its requests go first in each process), the leads walks use what remains;
 * when the budget falls short, the cadence that slips is named once, with how
 * far it slips.
 */

export interface RequestDemand {
  /** Requests a minute the events rhythms of all campaigns need at their cadences. */
  eventsPerMinute: number;
  /** Requests a minute the leads rhythms need (detail, lead pages, sequences). */
  leadsPerMinute: number;
  budgetPerMinute: number;
}

/** Lead pages of a walk of `leads` leads (README, "Requests per run"). */
export function leadPages(leads: number): number {
  return leads < 100 ? 1 : Math.floor((leads - 100) / 99) + 2;
}

export async function requestDemand(
  db: Kysely<Database>,
  account: string,
  cadence: Cadence & Partial<Pick<Config["worker"], "terminalRewalkEveryMs">>,
  requestsPerSecond: number,
): Promise<RequestDemand> {
  const campaigns = await db
    .selectFrom("campaigns as c")
    .select([
      "c.status",
      "c.started_running_at",
      sql<number>`(select count(*)::int from leads l where l.campaign_uid = c.uid and l._deleted_at is null)`.as("leads"),
      sql<number>`(select count(*)::int from email_sequences q where q.campaign_uid = c.uid and q._deleted_at is null)`.as("sequences"),
    ])
    .where("c._account", "=", account)
    .where("c._deleted_at", "is", null)
    .execute();
  let eventsPerMinute = 0;
  let leadsPerMinute = 0;
  for (const campaign of campaigns) {
    const fullWalk = leadPages(campaign.leads) + campaign.sequences;
    // A terminal campaign past its final walks costs its detail, and a full walk again now and then.
    const terminal = isTerminal(campaign.status);
    const walk = terminal ? 1 : 1 + fullWalk;
    const eventsEvery = eventsCadenceOf(campaign, cadence);
    const leadsEvery = leadsCadenceOf(campaign.status, cadence);
    if (eventsEvery !== undefined) eventsPerMinute += (3 * 60_000) / eventsEvery;
    // With the events rhythm off, a started campaign's event tails are read with its leads.
    const eventsInWalk = cadence.eventsEveryMs === undefined && hasStarted(campaign) ? 3 : 0;
    leadsPerMinute += ((walk + eventsInWalk) * 60_000) / leadsEvery;
    const rewalkEvery = cadence.terminalRewalkEveryMs;
    if (terminal && rewalkEvery !== undefined) leadsPerMinute += (fullWalk * 60_000) / Math.max(rewalkEvery, leadsEvery);
  }
  return { eventsPerMinute, leadsPerMinute, budgetPerMinute: requestsPerSecond * 60 };
}

/** What slips when the budget falls short, in a sentence; undefined when it covers both rhythms. */
export function shortfallOf(demand: RequestDemand): string | undefined {
  const { eventsPerMinute, leadsPerMinute, budgetPerMinute } = demand;
  const rounded = (value: number) => Math.ceil(value);
  if (eventsPerMinute > budgetPerMinute) {
    return (
      `the events cadence needs ${rounded(eventsPerMinute)} requests a minute, more than the budget of ${budgetPerMinute}: ` +
      `events are read about ${(eventsPerMinute / budgetPerMinute).toFixed(1)}x slower than COLDSYNC_EVENTS_EVERY, and leads walks wait for spare requests`
    );
  }
  const remaining = budgetPerMinute - eventsPerMinute;
  if (leadsPerMinute > remaining) {
    return (
      `the leads cadences need ${rounded(leadsPerMinute)} requests a minute, but ${rounded(remaining)} of the budget of ${budgetPerMinute} remain after the events: ` +
      `leads walks run about ${(leadsPerMinute / Math.max(remaining, 1)).toFixed(1)}x slower than COLDSYNC_ACTIVE_EVERY / COLDSYNC_IDLE_EVERY / COLDSYNC_TERMINAL_EVERY`
    );
  }
  return undefined;
}

/** Logs the shortfall when it first appears or changes, and once when the budget covers the cadences again. */
export function budgetWatcher(logger: Logger): (demand: RequestDemand) => void {
  let last: string | undefined;
  return (demand) => {
    const shortfall = shortfallOf(demand);
    if (shortfall === last) return;
    if (shortfall === undefined) logger.info({ ...demand }, "the request budget covers the configured cadences again");
    else logger.warn({ ...demand }, `the request budget does not cover the configured cadences: ${shortfall}`);
    last = shortfall;
  };
}
