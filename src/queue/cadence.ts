import { sql, type Kysely } from "kysely";
import type { Config } from "../config.ts";
import { EVENT_STREAM_NAMES, hasStarted, isTerminal, recordsFinalLeadsWalk } from "../sync/campaign-sync.ts";
import type { Database } from "../warehouse/database.ts";

/**
 * When a campaign's rhythms are due, judged from what was actually synced:
 * the checkpoints' last complete scans, not run rows (a run that failed half
 * way still completed the streams it completed).
 *
 * - The leads rhythm (detail, leads walk, sequences) follows the campaign's
 *   status: live campaigns change by the minute, idle ones rarely, finished
 *   ones almost never. A campaign that became terminal after its last leads
 *   cycle is due at once, so its final sends, opens and replies are captured.
 *   It is judged by the older of the detail's last complete read and the
 *   leads walk's, so a cycle whose walk failed after its detail was read is
 *   due again at the next discovery; after a terminal campaign's final walks,
 *   which are not repeated, by the detail's alone.
 * - The events rhythm (replies, click and open tails) runs every
 *   COLDSYNC_EVENTS_EVERY for a started campaign that can still send, every
 *   COLDSYNC_TERMINAL_EVERY for a terminal one, never for one that never
 *   started. It is judged by the stalest of its three streams.
 */

/** The rhythms' periods, and how often each is checked: the leads rhythm at each discovery, the events rhythm at each events tick. */
export type Cadence = Pick<Config["worker"], "activeEveryMs" | "idleEveryMs" | "terminalEveryMs" | "eventsEveryMs" | "discoverEveryMs">;

export interface DiscoveredCampaign {
  uid: string;
  /** As the upstream sent it; a status the spec does not list gets the idle cadence (neither active nor terminal). */
  status: string | null;
}

const ACTIVE_STATUSES: readonly string[] = ["running", "paused"];

export function leadsCadenceOf(status: string | null, cadence: Cadence): number {
  if (status !== null && ACTIVE_STATUSES.includes(status)) return cadence.activeEveryMs;
  if (isTerminal(status)) return cadence.terminalEveryMs;
  return cadence.idleEveryMs;
}

/** The events rhythm's period, or undefined when the campaign has no events rhythm (never started, or events run with the leads). */
export function eventsCadenceOf(campaign: { status: string | null; started_running_at: unknown }, cadence: Cadence): number | undefined {
  if (cadence.eventsEveryMs === undefined || !hasStarted(campaign)) return undefined;
  return isTerminal(campaign.status) ? cadence.terminalEveryMs : cadence.eventsEveryMs;
}

/**
 * Whether a rhythm of period `everyMs`, checked every `checkEveryMs`, is due:
 * at the check nearest to `lastAt + everyMs`; at once when it never completed,
 * or the campaign finished since. A scan completes some time after the check
 * that queued it, so "a whole period has passed" would still be false at the
 * next check, and a rhythm would run every other check.
 */
export function isDue(lastAt: Date | undefined, everyMs: number, now: Date, options: { checkEveryMs?: number; finishedAt?: Date | undefined } = {}): boolean {
  if (lastAt === undefined) return true;
  if (options.finishedAt !== undefined && lastAt < options.finishedAt) return true;
  const slackMs = Math.min(options.checkEveryMs ?? 0, everyMs) / 2;
  return now.getTime() - lastAt.getTime() >= everyMs - slackMs;
}

/** Per campaign of the account, the oldest last complete scan of `streams` (undefined when one never completed). */
async function lastCompleteScans(db: Kysely<Database>, account: string, streams: readonly string[]): Promise<Map<string, Date | undefined>> {
  const rows = await db
    .selectFrom("sync_checkpoints")
    .select(["campaign_uid", sql<Date | null>`min(last_complete_scan_at)`.as("oldest"), sql<number>`count(last_complete_scan_at)::int`.as("completed")])
    .where("account", "=", account)
    .where("campaign_uid", "<>", "")
    .where("stream", "in", [...streams])
    .groupBy("campaign_uid")
    .execute();
  return new Map(rows.map((row) => [row.campaign_uid, row.completed === streams.length && row.oldest !== null ? new Date(row.oldest) : undefined]));
}

/** Per campaign of the account, when its leads rhythm last completed (undefined when it never did). */
async function lastLeadsCycles(db: Kysely<Database>, account: string): Promise<Map<string, Date | undefined>> {
  const rows = await db
    .selectFrom("sync_checkpoints")
    .select(["campaign_uid", "stream", "state", "last_complete_scan_at", "scan_started_at"])
    .where("account", "=", account)
    .where("campaign_uid", "<>", "")
    .where("stream", "in", ["campaign_detail", "leads"])
    .execute();
  const detailReads = new Map<string, Date | null>();
  const walks = new Map<string, { completedAt: Date | null; final: boolean }>();
  for (const row of rows) {
    const completedAt = row.last_complete_scan_at === null ? null : new Date(row.last_complete_scan_at);
    if (row.stream === "campaign_detail") detailReads.set(row.campaign_uid, completedAt);
    else walks.set(row.campaign_uid, { completedAt, final: recordsFinalLeadsWalk(row) });
  }
  const cycles = new Map<string, Date | undefined>();
  for (const [uid, detailRead] of detailReads) {
    const walk = walks.get(uid);
    if (detailRead === null) cycles.set(uid, undefined);
    else if (walk?.final) cycles.set(uid, detailRead);
    else if (walk?.completedAt === null || walk?.completedAt === undefined) cycles.set(uid, undefined);
    else cycles.set(uid, walk.completedAt < detailRead ? walk.completedAt : detailRead);
  }
  return cycles;
}

/** The campaigns among `campaigns` whose leads rhythm is due now. */
export async function dueForLeads(
  db: Kysely<Database>,
  account: string,
  campaigns: readonly DiscoveredCampaign[],
  cadence: Cadence,
  now: Date = new Date(),
): Promise<DiscoveredCampaign[]> {
  if (campaigns.length === 0) return [];
  const uids = campaigns.map((campaign) => campaign.uid);
  const [lastCycles, statuses] = await Promise.all([
    lastLeadsCycles(db, account),
    db
      .selectFrom("campaign_history")
      .select(["campaign_uid", "status", (eb) => eb.fn.min("valid_from").as("since")])
      .where("campaign_uid", "in", uids)
      .groupBy(["campaign_uid", "status"])
      .execute(),
  ]);
  const since = new Map(statuses.map((row) => [`${row.campaign_uid}|${row.status}`, new Date(row.since)]));
  return campaigns.filter((campaign) => {
    const finishedAt = isTerminal(campaign.status) ? since.get(`${campaign.uid}|${campaign.status}`) : undefined;
    return isDue(lastCycles.get(campaign.uid), leadsCadenceOf(campaign.status, cadence), now, { checkEveryMs: cadence.discoverEveryMs, finishedAt });
  });
}

/** The account's live campaigns whose events rhythm is due now, read from the warehouse alone (no request upstream). */
export async function dueForEvents(db: Kysely<Database>, account: string, cadence: Cadence, now: Date = new Date()): Promise<string[]> {
  if (cadence.eventsEveryMs === undefined) return [];
  const [campaigns, lastEvents] = await Promise.all([
    db.selectFrom("campaigns").select(["uid", "status", "started_running_at"]).where("_account", "=", account).where("_deleted_at", "is", null).orderBy("uid").execute(),
    lastCompleteScans(db, account, EVENT_STREAM_NAMES),
  ]);
  return campaigns.flatMap((campaign) => {
    const everyMs = eventsCadenceOf(campaign, cadence);
    return everyMs !== undefined && isDue(lastEvents.get(campaign.uid), everyMs, now, { checkEveryMs: cadence.eventsEveryMs }) ? [campaign.uid] : [];
  });
}
