import { sql, type Kysely } from "kysely";
import { campaignStatus } from "../../sync/status.ts";
import type { Database } from "../../warehouse/database.ts";
import { eventsCadenceOf, type Cadence } from "../../queue/cadence.ts";
import { freshnessOf, streamCadenceMs, type Freshness } from "./lag.ts";
import { lastErrors, type ErrorRow } from "./last-errors.ts";

/**
 * The campaigns panel's rows: what `coldsync status` shows (status, rows,
 * each stream's last complete scan, lag), judged against the cadence, plus
 * what needs a person: records still rejected, rows carrying field issues,
 * and the last error a run recorded for the campaign.
 */

export interface RecordedError {
  at: Date | null;
  runId: number;
  stream: string;
  message: string;
  /** False once every stream has completed a scan after it: the campaign has recovered. */
  current: boolean;
}

export interface CampaignHealth {
  uid: string;
  name: string | null;
  status: string | null;
  rows: { leads: number; replies: number; link_clicks: number; email_opens: number };
  /** Each stream's last complete scan (null: never completed). */
  streams: Record<string, Date | null>;
  /** Seconds since the stalest stream that runs every cycle completed; null when one never did. */
  lagSeconds: number | null;
  /** The leads rhythm's cadence, and the events rhythm's where it runs on its own. */
  cadenceMs: number;
  eventsCadenceMs: number | undefined;
  freshness: Freshness;
  /** The streams older than their rhythm allows (lag.ts). */
  behindStreams: string[];
  /** Records (or parts of records) of this campaign that could not be placed and are still met. */
  rejected: number;
  lastError: RecordedError | null;
}

export interface AccountHealth {
  /** Last complete scan of the account-level streams (workspaces, domains, contact lists, campaigns). */
  streams: Record<string, Date | null>;
  rejected: number;
  lastError: RecordedError | null;
}

async function rejectedPerCampaign(db: Kysely<Database>, account: string): Promise<Map<string | null, number>> {
  const rows = await db
    .selectFrom("rejected_records")
    .select(["campaign_uid", sql<number>`count(*)::int`.as("records")])
    .where("account", "=", account)
    .where("resolved_at", "is", null)
    .groupBy("campaign_uid")
    .execute();
  return new Map(rows.map((row) => [row.campaign_uid, row.records]));
}

/** Every table that hangs from a campaign, and the column naming it. */
const CAMPAIGN_TABLES = ["leads", "schedules", "replies", "link_clicks", "email_opens", "email_sequences", "campaign_sending_domains"] as const;

/** Live rows with a field issue per campaign: a scan of every campaign table, so read with the other heavy counts. */
export async function fieldIssueRowsPerCampaign(db: Kysely<Database>, account: string): Promise<Record<string, number>> {
  const parts = CAMPAIGN_TABLES.map(
    (table) => sql`SELECT campaign_uid FROM ${sql.table(table)} WHERE _field_issues IS NOT NULL AND _deleted_at IS NULL`,
  );
  const { rows } = await sql<{ campaign_uid: string; rows: number }>`
    WITH issues AS (
      ${sql.join(parts, sql` UNION ALL `)}
      UNION ALL SELECT uid FROM campaigns WHERE _field_issues IS NOT NULL AND _deleted_at IS NULL AND _account = ${account}
    )
    SELECT campaign_uid, count(*)::int AS rows FROM issues GROUP BY campaign_uid`.execute(db);
  return Object.fromEntries(rows.map((row) => [row.campaign_uid, row.rows]));
}

function recordedError(row: ErrorRow | undefined, recoveredAfter: (at: Date) => boolean): RecordedError | null {
  if (!row) return null;
  return {
    at: row.at,
    runId: row.run_id,
    stream: row.stream ?? "run",
    message: row.message ?? "(no message)",
    current: row.at === null || !recoveredAfter(row.at),
  };
}

/** True when every stream listed completed a scan after `at`. */
function allScannedAfter(streams: Record<string, Date | null>, at: Date): boolean {
  const times = Object.values(streams);
  return times.length > 0 && times.every((time) => time !== null && time > at);
}

export interface WarehouseHealth {
  campaigns: CampaignHealth[];
  account: AccountHealth;
}

export async function warehouseHealth(db: Kysely<Database>, account: string, cadence: Cadence, now = new Date()): Promise<WarehouseHealth> {
  const [campaigns, accountStreams, errors, rejected] = await Promise.all([
    campaignStatus(db, account, now),
    db
      .selectFrom("sync_checkpoints")
      .select(["stream", "last_complete_scan_at"])
      .where("account", "=", account)
      .where("campaign_uid", "=", "")
      .orderBy("stream")
      .execute(),
    lastErrors(db, account),
    rejectedPerCampaign(db, account),
  ]);
  const streams = Object.fromEntries(accountStreams.map((row) => [row.stream, row.last_complete_scan_at]));
  return {
    account: {
      streams,
      rejected: rejected.get(null) ?? 0,
      lastError: recordedError(errors.get(null), (at) => allScannedAfter(streams, at)),
    },
    campaigns: campaigns.map((campaign) => {
      const { lag_seconds: lagSeconds, stalest_scan_at: stalestScan } = campaign;
      const freshness = freshnessOf({ status: campaign.status, streams: campaign.streams, finalWalksDone: campaign.final_walks_done }, cadence, now);
      return {
        uid: campaign.campaign_uid,
        name: campaign.name,
        status: campaign.status,
        rows: { leads: campaign.leads, replies: campaign.replies, link_clicks: campaign.link_clicks, email_opens: campaign.email_opens },
        streams: campaign.streams,
        lagSeconds,
        cadenceMs: streamCadenceMs("leads", campaign.status, cadence),
        eventsCadenceMs: eventsCadenceOf(campaign, cadence),
        freshness: freshness.freshness,
        behindStreams: freshness.behind,
        rejected: rejected.get(campaign.campaign_uid) ?? 0,
        // Recovered once the stalest stream that counts towards the lag completed after the error.
        lastError: recordedError(errors.get(campaign.campaign_uid), (at) => stalestScan !== null && stalestScan > at),
      };
    }),
  };
}
