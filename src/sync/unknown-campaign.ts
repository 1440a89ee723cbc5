import { InvalidRecordError, UpstreamError } from "../upstream/client.ts";
import type { SyncContext } from "./context.ts";
import { throwIfAborted } from "./stream-run.ts";

/**
 * A campaign named by `--campaign` that neither side knows (a typo). The upstream answers 404 to every request
 * about a campaign it does not know, which the sync takes for a campaign deleted upstream and verify for one that
 * holds nothing: for a campaign the warehouse never held, nothing was deleted and nothing can be compared.
 */

export const NO_SUCH_CAMPAIGN = "no such campaign: the upstream answers 404 for it and the warehouse never held it";

/** A run's failure of the campaign: the run's failures name the campaign beside the message. */
export class UnknownCampaignError extends Error {
  constructor(readonly campaignUid: string) {
    super(NO_SUCH_CAMPAIGN);
    this.name = "UnknownCampaignError";
  }
}

/** Whether the warehouse never held the campaign, live or deleted, and the upstream answers 404 for its detail (#2). */
export async function isUnknownCampaign(ctx: SyncContext, campaignUid: string): Promise<boolean> {
  return (await heldCampaign(ctx, campaignUid)) === undefined && !(await upstreamKnowsCampaign(ctx, campaignUid));
}

/** The campaign's row as the account's warehouse holds it, live or deleted; undefined when it never held it. */
export async function heldCampaign(ctx: SyncContext, campaignUid: string): Promise<{ _deleted_at: Date | null } | undefined> {
  return ctx.db.selectFrom("campaigns").select("_deleted_at").where("_account", "=", ctx.account).where("uid", "=", campaignUid).executeTakeFirst();
}

/** Whether the upstream answers the campaign's detail (#2) with the campaign rather than a 404. */
export async function upstreamKnowsCampaign(ctx: SyncContext, campaignUid: string): Promise<boolean> {
  try {
    await ctx.client.getCampaign(campaignUid, ctx.signal);
    return true;
  } catch (error) {
    // A detail that cannot be placed is still an answer: the upstream knows the campaign.
    if (error instanceof InvalidRecordError) return true;
    if (error instanceof UpstreamError && error.status === 404) return false;
    throwIfAborted(ctx.signal);
    throw error;
  }
}
