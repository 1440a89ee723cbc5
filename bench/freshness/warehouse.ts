import { sql, type Kysely } from "kysely";
import { eventsCadenceOf, leadsCadenceOf, type Cadence } from "../../src/queue/cadence.ts";
import { hasStarted, isTerminal } from "../../src/sync/campaign-sync.ts";
import type { Database } from "../../src/warehouse/database.ts";
import { KEY_SQL } from "../../test/support/truth.ts";
import type { EventStream } from "./lag.ts";

/** What the bench reads from a worker's warehouse: progress of the backfill, the events it holds and when, its runs. */

interface CampaignRow {
  uid: string;
  status: string | null;
  started_running_at: Date | null;
}

async function campaigns(db: Kysely<Database>, account: string): Promise<CampaignRow[]> {
  return db.selectFrom("campaigns").select(["uid", "status", "started_running_at"]).where("_account", "=", account).where("_deleted_at", "is", null).execute();
}

/** Started campaigns that can still send: the ones whose events rhythm runs every COLDSYNC_EVENTS_EVERY. */
async function liveStartedCampaigns(db: Kysely<Database>, account: string): Promise<string[]> {
  return (await campaigns(db, account)).filter((row) => hasStarted(row) && !isTerminal(row.status)).map((row) => row.uid);
}

/**
 * Whether the first sync is over: the warehouse holds `expected` campaigns, and
 * each had its detail and leads walked completely, and, once started, its
 * replies, clicks and opens read completely.
 */
export async function backfillDone(db: Kysely<Database>, account: string, expected: number): Promise<boolean> {
  const { rows } = await sql<CampaignRow & { leads_done: number; events_done: number }>`
    SELECT c.uid, c.status, c.started_running_at,
           count(k.last_complete_scan_at) FILTER (WHERE k.stream IN ('campaign_detail', 'leads'))::int AS leads_done,
           count(k.last_complete_scan_at) FILTER (WHERE k.stream IN ('replies', 'link_clicks', 'email_opens'))::int AS events_done
      FROM campaigns c
      LEFT JOIN sync_checkpoints k ON k.account = c._account AND k.campaign_uid = c.uid
     WHERE c._account = ${account} AND c._deleted_at IS NULL
     GROUP BY c.uid, c.status, c.started_running_at`.execute(db);
  return rows.length === expected && rows.every((row) => row.leads_done === 2 && (!hasStarted(row) || row.events_done === 3));
}

/** Per stream, every event row the warehouse holds (soft-deleted ones too: it held them), by truth key, with `_first_seen_at` in ms. */
export async function heldEvents(db: Kysely<Database>): Promise<Record<EventStream, Map<string, number>>> {
  const { rows } = await sql<{ stream: EventStream; key: string; first_seen_at: Date }>`
    SELECT 'replies' AS stream, ${KEY_SQL.replies} AS key, _first_seen_at AS first_seen_at FROM replies
    UNION ALL SELECT 'link_clicks', ${KEY_SQL.link_clicks}, _first_seen_at FROM link_clicks
    UNION ALL SELECT 'email_opens', ${KEY_SQL.email_opens}, _first_seen_at FROM email_opens`.execute(db);
  const held: Record<EventStream, Map<string, number>> = { replies: new Map(), link_clicks: new Map(), email_opens: new Map() };
  for (const row of rows) held[row.stream].set(row.key, new Date(row.first_seen_at).getTime());
  return held;
}

export interface RunTally {
  runs: number;
  failed: number;
  /** What the runs themselves counted (sync_runs.requests). */
  requests: number;
}

/** The account's events runs that started in (fromMs, toMs]. */
export async function eventsRuns(db: Kysely<Database>, account: string, fromMs: number, toMs: number): Promise<RunTally> {
  const row = await db
    .selectFrom("sync_runs")
    .select([
      sql<number>`count(*)::int`.as("runs"),
      sql<number>`count(*) FILTER (WHERE outcome NOT IN ('succeeded', 'running'))::int`.as("failed"),
      sql<number>`coalesce(sum(requests), 0)::int`.as("requests"),
    ])
    .where("account", "=", account)
    .where("rhythm", "=", "events")
    .where("started_at", ">", new Date(fromMs))
    .where("started_at", "<=", new Date(toMs))
    .executeTakeFirstOrThrow();
  return row;
}

/** Whether every live started campaign had an events run that started at or after `sinceMs` and succeeded. */
export async function eventsReadSince(db: Kysely<Database>, account: string, sinceMs: number): Promise<boolean> {
  const live = await liveStartedCampaigns(db, account);
  const read = await db
    .selectFrom("sync_runs")
    .select("scope")
    .distinct()
    .where("account", "=", account)
    .where("rhythm", "=", "events")
    .where("outcome", "=", "succeeded")
    .where("started_at", ">=", new Date(sinceMs))
    .execute();
  const scopes = new Set(read.map((row) => row.scope));
  return live.every((uid) => scopes.has(uid));
}

/** Seconds between a campaign's consecutive events runs that started in (fromMs, toMs], over every campaign: the cadence achieved. */
export async function eventsIntervals(db: Kysely<Database>, account: string, fromMs: number, toMs: number): Promise<number[]> {
  const { rows } = await sql<{ seconds: number }>`
    SELECT extract(epoch FROM started_at - lag(started_at) OVER (PARTITION BY scope ORDER BY started_at))::float8 AS seconds
      FROM sync_runs
     WHERE account = ${account} AND rhythm = 'events' AND started_at > ${new Date(fromMs)} AND started_at <= ${new Date(toMs)}`.execute(db);
  return rows.flatMap((row) => (row.seconds === null ? [] : [row.seconds])).sort((a, b) => a - b);
}

export interface FormulaRate {
  events: number;
  leads: number;
}

/**
 * README, "Freshness": the minimum requests a minute when nothing changes,
 * Σ events cycle × (1 min / its cadence) + Σ leads cycle × (1 min / its cadence),
 * with the campaigns, leads and sequences the warehouse holds. A terminal
 * campaign is taken as past its final walk (the backfill walked it).
 */
export async function formulaPerMinute(db: Kysely<Database>, account: string, cadence: Cadence, pageSize: number): Promise<FormulaRate> {
  const { rows } = await sql<CampaignRow & { leads: number; sequences: number }>`
    SELECT c.uid, c.status, c.started_running_at,
           (SELECT count(*) FROM leads l WHERE l.campaign_uid = c.uid AND l._deleted_at IS NULL)::int AS leads,
           (SELECT count(*) FROM email_sequences s WHERE s.campaign_uid = c.uid AND s._deleted_at IS NULL)::int AS sequences
      FROM campaigns c WHERE c._account = ${account} AND c._deleted_at IS NULL`.execute(db);
  const rate: FormulaRate = { events: 0, leads: 0 };
  for (const row of rows) {
    const eventsEvery = eventsCadenceOf(row, cadence);
    if (eventsEvery !== undefined) rate.events += (3 * 60_000) / eventsEvery;
    // With COLDSYNC_EVENTS_EVERY=off a started campaign's events tails go with its leads cycle.
    const withEvents = cadence.eventsEveryMs === undefined && hasStarted(row) ? 3 : 0;
    const leadsCycle = (isTerminal(row.status) ? 1 : 1 + Math.max(1, Math.ceil(row.leads / pageSize)) + row.sequences) + withEvents;
    rate.leads += (leadsCycle * 60_000) / leadsCadenceOf(row.status, cadence);
  }
  return rate;
}
