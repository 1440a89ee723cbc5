import { sql } from "kysely";
import type { Kysely } from "kysely";
import { TERMINAL_CAMPAIGN_STATUSES } from "../upstream/enums.ts";
import type { Database } from "../warehouse/database.ts";

/**
 * What `coldsync status` shows: per campaign its status, rows, each stream's
 * last complete scan and the lag behind now; and the last runs.
 */

export interface CampaignStatusRow {
  campaign_uid: string;
  name: string | null;
  status: string;
  leads: number;
  replies: number;
  link_clicks: number;
  email_opens: number;
  streams: Record<string, Date | null>;
  lag_seconds: number | null;
}

export interface CampaignLag {
  /** Stream name to the time of its last complete scan. */
  streams: Record<string, Date | null>;
  /** Seconds since the stalest stream that runs every cycle last completed; null when one never did. */
  lagSeconds: number | null;
}

/** Per live campaign of the account: its streams' last complete scans and its lag. */
export async function campaignLag(db: Kysely<Database>, account: string, now = new Date()): Promise<Map<string, CampaignLag>> {
  const [campaigns, checkpoints] = await Promise.all([
    db.selectFrom("campaigns").select(["uid", "status"]).where("_account", "=", account).where("_deleted_at", "is", null).execute(),
    db
      .selectFrom("sync_checkpoints")
      .select(["campaign_uid", "stream", "last_complete_scan_at"])
      .where("account", "=", account)
      .where("campaign_uid", "<>", "")
      .execute(),
  ]);
  const byCampaign = new Map<string, Record<string, Date | null>>();
  for (const checkpoint of checkpoints) {
    const streams = byCampaign.get(checkpoint.campaign_uid) ?? {};
    streams[checkpoint.stream] = checkpoint.last_complete_scan_at;
    byCampaign.set(checkpoint.campaign_uid, streams);
  }
  return new Map(
    campaigns.map((campaign) => {
      const streams = byCampaign.get(campaign.uid) ?? {};
      // A terminal campaign's leads had their final scan and are not walked again; a lead
      // refresh runs only when events arrive. Neither says how far behind the campaign is.
      const terminal = (TERMINAL_CAMPAIGN_STATUSES as readonly string[]).includes(campaign.status);
      const times = Object.entries(streams)
        .filter(([stream]) => stream !== "lead_refresh" && !(terminal && stream === "leads"))
        .map(([, time]) => time);
      const oldest = times.length === 0 || times.includes(null) ? null : Math.min(...times.map((time) => (time as Date).getTime()));
      return [campaign.uid, { streams, lagSeconds: oldest === null ? null : Math.round((now.getTime() - oldest) / 1000) }];
    }),
  );
}

export async function campaignStatus(db: Kysely<Database>, account: string, now = new Date()): Promise<CampaignStatusRow[]> {
  const count = (table: "leads" | "replies" | "link_clicks" | "email_opens") =>
    sql<number>`(select count(*) from ${sql.table(table)} t where t.campaign_uid = c.uid and t._deleted_at is null)`;
  const [campaigns, lags] = await Promise.all([
    db
      .selectFrom("campaigns as c")
      .select(["c.uid", "c.name", "c.status"])
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
      leads: Number(campaign.leads),
      replies: Number(campaign.replies),
      link_clicks: Number(campaign.link_clicks),
      email_opens: Number(campaign.email_opens),
      streams: lag?.streams ?? {},
      lag_seconds: lag?.lagSeconds ?? null,
    };
  });
}

export async function lastRuns(db: Kysely<Database>, account: string, limit = 10) {
  return db
    .selectFrom("sync_runs")
    .select(["id", "trigger", "scope", "started_at", "finished_at", "outcome", "requests", "retries", "rejected"])
    .where("account", "=", account)
    .orderBy("id", "desc")
    .limit(limit)
    .execute();
}
