import { sql } from "kysely";
import type { Kysely } from "kysely";
import type { Database } from "../warehouse/database.ts";
import { FINAL_WALK_STREAMS, isTerminal, recordsFinalLeadsWalk, streamsOf } from "./campaign-sync.ts";
import type { CheckpointState } from "./checkpoints.ts";
import { LEAD_REFRESH, leads } from "./streams/index.ts";

/**
 * What `coldsync status` shows: per campaign its status, rows, each stream's
 * last complete scan and the lag behind now; and the last runs.
 */

export interface CampaignStatusRow {
  campaign_uid: string;
  name: string | null;
  status: string | null;
  /** When the campaign first started sending; with `status`, whether it has events at all. */
  started_running_at: Date | null;
  leads: number;
  replies: number;
  link_clicks: number;
  email_opens: number;
  streams: Record<string, Date | null>;
  /** The campaign is terminal and its leads had their final walks (CampaignLag). */
  final_walks_done: boolean;
  /** When the stalest stream that runs every cycle last completed; null when one never did. */
  stalest_scan_at: Date | null;
  lag_seconds: number | null;
}

export interface CampaignLag {
  /** Stream name to the time of its last complete scan. */
  streams: Record<string, Date | null>;
  /** The campaign is terminal and its leads had their final walks: they and its email sequences are read no more. */
  finalWalksDone: boolean;
  /** When the stalest stream that runs every cycle last completed; null when one never did. */
  stalestScanAt: Date | null;
  /** Seconds since then, rounded. */
  lagSeconds: number | null;
  /**
   * The lag, or while a stream never completed, the seconds since the warehouse first saw the campaign:
   * a campaign whose walk fails every time keeps falling behind instead of having no lag at all.
   */
  behindSeconds: number;
}

/**
 * Whether a stream's last complete scan says how far behind its campaign is: not a lead refresh, which runs
 * only when events need it, nor, once a terminal campaign's final walks are done, its leads and email
 * sequences, which are not read again. Until then they count: a terminal campaign whose leads were never
 * walked is not fresh.
 */
export function countsTowardLag(stream: string, finalWalksDone: boolean): boolean {
  return stream !== LEAD_REFRESH && !(finalWalksDone && FINAL_WALK_STREAMS.includes(stream));
}

/**
 * Each stream the engine reads of the campaign, as never completed: a stream that failed on its first page
 * has no checkpoint row, and leaving it out would date the campaign by the streams that did complete.
 */
function neverCompleted(campaign: { status: string | null; started_running_at: unknown }): Record<string, null> {
  return Object.fromEntries(streamsOf(campaign).map((stream) => [stream, null]));
}

/** Per live campaign of the account: its streams' last complete scans and its lag. */
export async function campaignLag(db: Kysely<Database>, account: string, now = new Date()): Promise<Map<string, CampaignLag>> {
  const [campaigns, checkpoints] = await Promise.all([
    db
      .selectFrom("campaigns")
      .select(["uid", "status", "started_running_at", "_first_seen_at"])
      .where("_account", "=", account)
      .where("_deleted_at", "is", null)
      .execute(),
    db
      .selectFrom("sync_checkpoints")
      .select(["campaign_uid", "stream", "last_complete_scan_at", "scan_started_at", "state"])
      .where("account", "=", account)
      .where("campaign_uid", "<>", "")
      .execute(),
  ]);
  const byCampaign = new Map<string, Record<string, Date | null>>();
  const finalWalks = new Set<string>();
  for (const checkpoint of checkpoints) {
    const streams = byCampaign.get(checkpoint.campaign_uid) ?? {};
    streams[checkpoint.stream] = checkpoint.last_complete_scan_at;
    byCampaign.set(checkpoint.campaign_uid, streams);
    if (checkpoint.stream === leads.name && recordsFinalLeadsWalk(checkpoint)) finalWalks.add(checkpoint.campaign_uid);
  }
  return new Map(
    campaigns.map((campaign) => {
      const streams = { ...neverCompleted(campaign), ...byCampaign.get(campaign.uid) };
      const finalWalksDone = isTerminal(campaign.status) && finalWalks.has(campaign.uid);
      const times = Object.entries(streams)
        .filter(([stream]) => countsTowardLag(stream, finalWalksDone))
        .map(([, time]) => time);
      const oldest = times.length === 0 || times.includes(null) ? null : Math.min(...times.map((time) => (time as Date).getTime()));
      const stalestScanAt = oldest === null ? null : new Date(oldest);
      const secondsSince = (time: number) => Math.round((now.getTime() - time) / 1000);
      const lagSeconds = oldest === null ? null : secondsSince(oldest);
      return [campaign.uid, { streams, finalWalksDone, stalestScanAt, lagSeconds, behindSeconds: lagSeconds ?? secondsSince(new Date(campaign._first_seen_at).getTime()) }];
    }),
  );
}

export async function campaignStatus(db: Kysely<Database>, account: string, now = new Date()): Promise<CampaignStatusRow[]> {
  const count = (table: "leads" | "replies" | "link_clicks" | "email_opens") =>
    sql<number>`(select count(*) from ${sql.table(table)} t where t.campaign_uid = c.uid and t._deleted_at is null)`;
  const [campaigns, lags] = await Promise.all([
    db
      .selectFrom("campaigns as c")
      .select(["c.uid", "c.name", "c.status", "c.started_running_at"])
      .select([count("leads").as("leads"), count("replies").as("replies"), count("link_clicks").as("link_clicks"), count("email_opens").as("email_opens")])
      .where("c._account", "=", account)
      .where("c._deleted_at", "is", null)
      .orderBy("c.created_on")
      .orderBy("c.uid")
      .execute(),
    campaignLag(db, account, now),
  ]);
  return campaigns.map((campaign) => {
    const lag = lags.get(campaign.uid);
    return {
      campaign_uid: campaign.uid,
      name: campaign.name,
      status: campaign.status,
      started_running_at: campaign.started_running_at,
      leads: Number(campaign.leads),
      replies: Number(campaign.replies),
      link_clicks: Number(campaign.link_clicks),
      email_opens: Number(campaign.email_opens),
      streams: lag?.streams ?? {},
      final_walks_done: lag?.finalWalksDone ?? false,
      stalest_scan_at: lag?.stalestScanAt ?? null,
      lag_seconds: lag?.lagSeconds ?? null,
    };
  });
}

export async function lastRuns(db: Kysely<Database>, account: string, limit = 10) {
  return db
    .selectFrom("sync_runs")
    .select(["id", "trigger", "scope", "started_at", "finished_at", "outcome", "requests", "retries", "rejected", "field_issues"])
    .where("account", "=", account)
    .orderBy("id", "desc")
    .limit(limit)
    .execute();
}

/**
 * A run's deviations (sync_runs.field_issues), most frequent first, as `name count`: fields of records, and what
 * no row can hold, such as a listing without a total (`leads.total`) or records only a lookup found
 * (`leads.listing`). Empty when every field read as the spec describes it.
 */
export function deviationsOf(fieldIssues: Record<string, number>, first = 3): string {
  const named = Object.entries(fieldIssues).sort(([a, left], [b, right]) => right - left || (a < b ? -1 : 1));
  const shown = named.slice(0, first).map(([name, count]) => `${name} ${count}`);
  return named.length > first ? `${shown.join(", ")}, … (${named.length} fields)` : shown.join(", ");
}

export interface FieldIssueCount {
  table_name: string;
  /** The field path with array positions as `*` (`settings.skip_days.*`). */
  field: string;
  /** Live rows whose field deviated (a row read by two endpoints counts once). */
  rows: number;
}

/** Live rows with a deviating field, per table and field: what `coldsync status` shows of the field_issues view. */
export async function fieldIssueCounts(db: Kysely<Database>, account: string): Promise<FieldIssueCount[]> {
  const { rows } = await sql<FieldIssueCount>`
    SELECT table_name, regexp_replace(field, '\\.\\d+(\\.|$)', '.*\\1', 'g') AS field, count(DISTINCT record_key)::int AS rows
      FROM field_issues
     WHERE account = ${account}
     GROUP BY 1, 2
     ORDER BY 1, 2`.execute(db);
  return rows;
}

export interface RejectedCount {
  stream: string;
  /** Records (or parts of records) that could not be placed and are still met. */
  records: number;
  /** What they held below them. */
  skipped: number;
}

export async function rejectedCounts(db: Kysely<Database>, account: string): Promise<RejectedCount[]> {
  const rows = await db
    .selectFrom("rejected_records")
    .select(["stream", sql<number>`count(*)::int`.as("records"), sql<number>`coalesce(sum(skipped), 0)::int`.as("skipped")])
    .where("account", "=", account)
    .where("resolved_at", "is", null)
    .groupBy("stream")
    .orderBy("stream")
    .execute();
  return rows;
}

export interface RhythmCadence {
  campaign_uid: string;
  rhythm: "leads" | "events";
  /** Seconds between the rhythm's last two complete cycles. */
  seconds: number;
}

/**
 * The cadence each campaign's rhythms achieved: the time between their last
 * two complete cycles, read from the checkpoints of the stream that completes
 * last in a cycle: the events rhythm's replies, the leads rhythm's leads walk
 * (its campaign detail once the final walks of a terminal campaign are done and
 * the rhythm reads the detail alone).
 */
export async function achievedCadences(db: Kysely<Database>, account: string): Promise<RhythmCadence[]> {
  const rows = await db
    .selectFrom("sync_checkpoints")
    .select(["campaign_uid", "stream", "state", "scan_started_at", "last_complete_scan_at"])
    .where("account", "=", account)
    .where("stream", "in", ["campaign_detail", "leads", "replies"])
    .where("last_complete_scan_at", "is not", null)
    .orderBy("campaign_uid")
    .execute();
  const byKey = new Map(rows.map((row) => [`${row.campaign_uid}|${row.stream}`, row]));
  return [...new Set(rows.map((row) => row.campaign_uid))].flatMap((campaignUid) => {
    const of = (stream: string) => byKey.get(`${campaignUid}|${stream}`);
    const walk = of("leads");
    const finalWalkDone = walk !== undefined && recordsFinalLeadsWalk(walk);
    const cycles = [
      { rhythm: "leads" as const, checkpoint: finalWalkDone ? of("campaign_detail") : walk },
      { rhythm: "events" as const, checkpoint: of("replies") },
    ];
    return cycles.flatMap(({ rhythm, checkpoint }) => {
      const previous = (checkpoint?.state as CheckpointState | null)?.previousCompleteScanAt;
      if (checkpoint?.last_complete_scan_at == null || previous === undefined) return [];
      return [{ campaign_uid: campaignUid, rhythm, seconds: (checkpoint.last_complete_scan_at.getTime() - new Date(previous).getTime()) / 1000 }];
    });
  });
}

export interface EventLag {
  stream: "replies" | "link_clicks" | "email_opens";
  events: number;
  /** Seconds from an event's own time to the warehouse holding it, at the 50th and 95th percentile. */
  p50: number | null;
  p95: number | null;
}

/** How fresh events reach the warehouse: p50 and p95 lag per stream, over events that happened in the last `windowHours`. */
export async function eventLag(db: Kysely<Database>, account: string, windowHours = 24): Promise<EventLag[]> {
  const { rows } = await sql<EventLag>`
    SELECT f.stream,
           count(*)::int AS events,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM f.lag))::float8 AS p50,
           percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM f.lag))::float8 AS p95
      FROM event_freshness f
      JOIN campaigns c ON c.uid = f.campaign_uid AND c._account = ${account}
     WHERE f.happened_at >= now() - make_interval(hours => ${windowHours})
     GROUP BY f.stream
     ORDER BY f.stream`.execute(db);
  return rows;
}
