import type { Kysely } from "kysely";
import type { Config } from "../config.ts";
import { TERMINAL_CAMPAIGN_STATUSES, type CampaignStatus } from "../upstream/enums.ts";
import type { Database } from "../warehouse/database.ts";

/**
 * Which campaigns discovery hands to campaign-sync. A campaign is due when its
 * last succeeded sync is older than the cadence of its status: live campaigns
 * change by the minute, idle ones rarely, finished ones almost never. A
 * campaign that became terminal after its last sync is due at once, so its
 * final sends, opens and replies are captured.
 */

export type Cadence = Pick<Config["worker"], "activeEveryMs" | "idleEveryMs" | "terminalEveryMs">;

export interface DiscoveredCampaign {
  uid: string;
  status: CampaignStatus;
}

const ACTIVE_STATUSES: readonly CampaignStatus[] = ["running", "paused"];

function cadenceOf(status: CampaignStatus, cadence: Cadence): number {
  if (ACTIVE_STATUSES.includes(status)) return cadence.activeEveryMs;
  if (TERMINAL_CAMPAIGN_STATUSES.includes(status)) return cadence.terminalEveryMs;
  return cadence.idleEveryMs;
}

export interface SyncHistory {
  /** Start of the last succeeded campaign-sync run. */
  lastSyncedAt: Date | undefined;
  /** When the warehouse first saw the campaign in its current status. */
  statusSince: Date | undefined;
}

export function isDue(campaign: DiscoveredCampaign, history: SyncHistory, cadence: Cadence, now: Date): boolean {
  const { lastSyncedAt, statusSince } = history;
  if (lastSyncedAt === undefined) return true;
  const justFinished = TERMINAL_CAMPAIGN_STATUSES.includes(campaign.status) && statusSince !== undefined && lastSyncedAt < statusSince;
  return justFinished || now.getTime() - lastSyncedAt.getTime() >= cadenceOf(campaign.status, cadence);
}

/** The campaigns among `campaigns` that are due now, judged from sync_runs and campaign_history. */
export async function dueCampaigns(
  db: Kysely<Database>,
  account: string,
  campaigns: readonly DiscoveredCampaign[],
  cadence: Cadence,
  now: Date = new Date(),
): Promise<DiscoveredCampaign[]> {
  if (campaigns.length === 0) return [];
  const uids = campaigns.map((campaign) => campaign.uid);
  const [runs, statuses] = await Promise.all([
    db
      .selectFrom("sync_runs")
      .select(["scope", (eb) => eb.fn.max("started_at").as("last_synced_at")])
      .where("account", "=", account)
      .where("outcome", "=", "succeeded")
      .where("scope", "in", uids)
      .groupBy("scope")
      .execute(),
    db
      .selectFrom("campaign_history")
      .select(["campaign_uid", "status", (eb) => eb.fn.min("valid_from").as("since")])
      .where("campaign_uid", "in", uids)
      .groupBy(["campaign_uid", "status"])
      .execute(),
  ]);
  const lastSynced = new Map(runs.map((run) => [run.scope, new Date(run.last_synced_at)]));
  const since = new Map(statuses.map((row) => [`${row.campaign_uid}|${row.status}`, new Date(row.since)]));
  return campaigns.filter((campaign) =>
    isDue(campaign, { lastSyncedAt: lastSynced.get(campaign.uid), statusSince: since.get(`${campaign.uid}|${campaign.status}`) }, cadence, now),
  );
}
