import { sql } from "kysely";
import type { Executor } from "../warehouse/column-arrays.ts";
import { cascadeDeletes } from "./soft-delete.ts";
import type { CascadeRule, StreamDefinition, StreamScope } from "./stream.ts";

/** Everything that hangs from a campaign: soft-deleted with it when the upstream no longer has it; its checkpoints are forgotten. */
export const CAMPAIGN_CHILDREN: CascadeRule = {
  from: "campaigns",
  children: [
    { table: "campaign_sending_domains", column: "campaign_uid" },
    { table: "email_sequences", column: "campaign_uid" },
    { table: "leads", column: "campaign_uid" },
    { table: "schedules", column: "campaign_uid" },
    { table: "replies", column: "campaign_uid" },
    { table: "link_clicks", column: "campaign_uid" },
    { table: "email_opens", column: "campaign_uid" },
  ],
  rejectedUnder: "campaign_uid",
  checkpointsUnder: "campaign_uid",
};

/** Whether `stream` says if its campaign exists (the listing, the detail): its pages may bring a deleted campaign back. */
const decidesCampaigns = (stream: Pick<StreamDefinition, "cascade">): boolean => stream.cascade?.some((rule) => rule.from === "campaigns") ?? false;

/**
 * A campaign stream's page can land after its campaign was found deleted: discovery takes no campaign lock, so
 * a page requested before the deletion may be written after the deletion's cascade, and would bring the
 * campaign's leads and events back under a campaign that stays deleted (nothing deletes them again). So the
 * page's transaction takes the campaign's row first, FOR SHARE: a deletion then waits for the page and
 * cascades over its rows, or the page sees the deletion and hands its rows to deleteChildrenAgain().
 * Resolves to when the campaign was deleted, null while it is live or not held (or the stream decides it).
 */
export async function lockCampaignOf(trx: Executor, stream: Pick<StreamDefinition, "cascade">, scope: StreamScope): Promise<Date | null> {
  if (scope.campaignUid === null || decidesCampaigns(stream)) return null;
  const { rows } = await sql<{ deleted_at: Date | null }>`
    SELECT _deleted_at AS deleted_at FROM campaigns WHERE uid = ${scope.campaignUid} FOR SHARE`.execute(trx);
  return rows[0]?.deleted_at ?? null;
}

/** Soft-deletes the live children of the deleted campaign `uid` again, dated as the campaign. */
export async function deleteChildrenAgain(trx: Executor, uid: string, deletedAt: Date): Promise<void> {
  await cascadeDeletes(trx, CAMPAIGN_CHILDREN, { uid, _deleted_at: deletedAt }, deletedAt);
}

/**
 * Whether the warehouse holds a newer detail read of the campaign than one observed at `observedAt`, or its
 * deletion after that moment: the leads and events rhythms each read the detail (the events rhythm after a
 * 404), under locks of their own, and discovery deletes a campaign under none, so a detail requested earlier
 * can land later, and would write its older sending domains over the newer ones or bring the deleted campaign
 * back. The row is taken FOR UPDATE: a second detail of the campaign waits, then sees this one.
 */
export async function campaignDetailSuperseded(trx: Executor, scope: StreamScope, observedAt: Date): Promise<boolean> {
  const { rows } = await sql<{ detail_observed_at: Date | null; deleted_at: Date | null }>`
    SELECT _detail_observed_at AS detail_observed_at, _deleted_at AS deleted_at FROM campaigns WHERE uid = ${scope.campaignUid} FOR UPDATE`.execute(trx);
  const held = rows[0];
  if (held === undefined) return false;
  const after = (at: Date | null) => at !== null && new Date(at).getTime() > observedAt.getTime();
  return after(held.detail_observed_at) || after(held.deleted_at);
}
