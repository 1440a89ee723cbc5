import type { ListOrder } from "./options.ts";
import type { Random } from "./random.ts";
import type { Collection } from "./store/collection.ts";
import type { Lister } from "./store/listing.ts";
import type { CampaignRecord, DomainRecord } from "./store/model.ts";
import { removeCampaign, removeDomain } from "./store/removals.ts";
import type { Account } from "./store/world.ts";

/**
 * The delete fault (hostile only): just before a page is served, a record the
 * client has already paged past (one that lies before the requested offset,
 * in the order being served) is deleted upstream. Every later record moves
 * one place forward, so a walk that pages by offset skips one it has not
 * seen, and the deleted one is gone from the ground truth at once.
 */

/** Campaigns a user deletes: drafts and finished ones, never one that is sending or about to. */
const DELETABLE_CAMPAIGN_STATUSES: ReadonlySet<CampaignRecord["status"]> = new Set(["created", "complete", "cancelled", "failed"]);

/**
 * Deletes one record lying before `offset`, starting the search at a random place; `remove` deletes
 * a record and answers true, or answers false for a record that cannot be deleted. False when none could.
 */
export function deleteBeforeOffset<T>(
  lister: Lister,
  collection: Collection<T>,
  order: ListOrder,
  offset: number,
  random: Random,
  remove: (record: T) => boolean,
): boolean {
  const before = lister.page(collection, order, 0, Math.min(offset, collection.length));
  if (before.length === 0) return false;
  const start = random.int(0, before.length - 1);
  for (let step = 0; step < before.length; step++) {
    if (remove(before[(start + step) % before.length] as T)) return true;
  }
  return false;
}

export function deleteCampaignIfIdle(account: Account, campaign: CampaignRecord): boolean {
  return DELETABLE_CAMPAIGN_STATUSES.has(campaign.status) && removeCampaign(account, campaign);
}

/** A domain goes only when no campaign of the account sends from it. */
export function deleteDomainIfUnused(account: Account, domain: DomainRecord): boolean {
  const used = account.campaigns.items.some((campaign) => campaign.settings.sending_domains.includes(domain.id));
  return !used && removeDomain(account, domain);
}
