import type { SyncContext } from "./context.ts";
import { keyList } from "./key-list.ts";
import { heldCampaign, NO_SUCH_CAMPAIGN, upstreamKnowsCampaign } from "./unknown-campaign.ts";
import type { VerifyLine } from "./verify.ts";

/**
 * The line `verify --campaign` gives the campaign itself. The account's
 * campaigns listing, which compares the campaign rows, is not read for one
 * campaign, and the campaign's listings answer 404 once the upstream deleted
 * it, which reads as a campaign holding nothing: a campaign row the warehouse
 * wrongly holds live (or wrongly holds deleted) changed no other line. So its
 * detail (#2) is asked for: the upstream knows the campaign or not, against
 * whether the warehouse holds it live. Neither side knowing it is no such
 * campaign (a typo): `unknown`, and its listings are not read.
 */
export async function campaignScopeLine(ctx: SyncContext, campaignUid: string): Promise<VerifyLine> {
  const [held, upstreamKnows] = await Promise.all([heldCampaign(ctx, campaignUid), upstreamKnowsCampaign(ctx, campaignUid)]);
  const line = { campaignUid, stream: "campaigns", rejected: 0 };
  if (held === undefined && !upstreamKnows) return { ...line, status: "unknown", upstream: 0, warehouse: 0, reason: NO_SUCH_CAMPAIGN };
  const heldLive = held !== undefined && held._deleted_at === null;
  const counts = { upstream: upstreamKnows ? 1 : 0, warehouse: heldLive ? 1 : 0 };
  if (upstreamKnows === heldLive) return { ...line, ...counts, status: "ok" };
  return upstreamKnows
    ? { ...line, ...counts, status: "missing", missingKeys: keyList([campaignUid]) }
    : { ...line, ...counts, status: "extra", extraKeys: keyList([campaignUid]) };
}
