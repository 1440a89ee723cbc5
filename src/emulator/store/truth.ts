import { TRUTH_ENTITIES, type GroundTruth, type TruthEntity } from "../options.ts";
import { eventIso, iso } from "./render.ts";
import type { Account, World } from "./world.ts";

/**
 * What one account holds right now, in the key format of GroundTruth
 * (src/emulator/options.ts): exactly the records a client can reach through
 * the API, so a warehouse that mirrors the API can be compared key by key.
 */
export function groundTruth(world: World, account: Account): GroundTruth {
  const keys = Object.fromEntries(TRUTH_ENTITIES.map((entity) => [entity, new Set<string>()])) as Record<TruthEntity, Set<string>>;
  for (const workspace of account.workspaces.items) keys.workspaces.add(String(workspace.id));
  for (const domain of account.domains.items) keys.domains.add(String(domain.id));
  for (const list of account.contactLists.items) keys.contact_lists.add(list.uid);
  for (const campaign of account.campaigns.items) {
    keys.campaigns.add(campaign.uid);
    for (const domainId of campaign.settings.sending_domains) keys.campaign_sending_domains.add(`${campaign.uid}|${domainId}`);
    for (const lead of campaign.leads.items) {
      keys.leads.add(world.leadUid(lead));
      keys.contacts.add(String(lead.contact.id));
      for (const schedule of lead.schedules) {
        keys.schedules.add(String(schedule.id));
        keys.email_sequences.add(String(schedule.sequence.id));
      }
    }
    for (const reply of campaign.replies.items) keys.replies.add(String(reply.id));
    for (const click of campaign.clicks.items) keys.link_clicks.add(`${click.schedule.id}|${click.link}|${eventIso(click.clickedOn, click.micros)}`);
    for (const open of campaign.opens.items) keys.email_opens.add(`${open.schedule.id}|${eventIso(open.openedOn, open.micros)}`);
  }
  const sorted = Object.fromEntries(TRUTH_ENTITIES.map((entity) => [entity, [...keys[entity]].sort()])) as Record<TruthEntity, string[]>;
  const counts = Object.fromEntries(TRUTH_ENTITIES.map((entity) => [entity, sorted[entity].length])) as Record<TruthEntity, number>;
  return { now: iso(world.now), counts, keys: sorted };
}
