import type { CampaignRecord, ClickRecord, ContactListRecord, ContactRecord, DomainRecord, LeadRecord, OpenRecord, PendingEvent, ScheduleRecord } from "./model.ts";
import type { Account } from "./world.ts";
import { TERMINAL_CAMPAIGN_STATUSES } from "../../upstream/enums.ts";
import { reassignSenders } from "../people.ts";

/**
 * Records deleted upstream (the delete fault), removed from every index that holds them, so that the
 * API and the ground truth agree at once. What belongs to a removed record goes with it (a lead's
 * schedules and their events, a campaign's leads and sequences); what others still use stays (a
 * contact of several leads, counters such as a workspace's totals, which count history). Each
 * answers whether the record was there to remove.
 */

/** A schedule's first and last open, recomputed from the opens that remain. */
function refreshOpenSummary(schedule: ScheduleRecord): void {
  let first: OpenRecord | undefined;
  let last: OpenRecord | undefined;
  for (const open of schedule.lead.campaign.opens.items) {
    if (open.schedule !== schedule) continue;
    first ??= open;
    last = open;
  }
  schedule.firstOpenedOn = first?.openedOn ?? null;
  schedule.lastOpenedOn = last?.openedOn ?? null;
  if (first?.micros !== undefined) schedule.firstOpenedMicros = first.micros;
  else if (schedule.firstOpenedMicros !== undefined) delete schedule.firstOpenedMicros;
}

export function removeOpen(open: OpenRecord): boolean {
  const schedule = open.schedule;
  if (!schedule.lead.campaign.opens.remove(open)) return false;
  schedule.openCount--;
  refreshOpenSummary(schedule);
  return true;
}

export function removeClick(click: ClickRecord): boolean {
  const schedule = click.schedule;
  if (!schedule.lead.campaign.clicks.remove(click)) return false;
  schedule.clicks = schedule.clicks?.filter((candidate) => candidate !== click) ?? null;
  if (schedule.clicks?.length === 0) schedule.clicks = null;
  return true;
}

/** A lead with its schedules, their opens, clicks and replies, and the activity still planned for them. */
export function removeLead(account: Account, lead: LeadRecord): boolean {
  const campaign = lead.campaign;
  if (!campaign.leads.remove(lead)) return false;
  account.leadsById.delete(lead.id);
  const ofLead = (event: { schedule: ScheduleRecord }) => event.schedule.lead === lead;
  campaign.opens.removeWhere(ofLead);
  campaign.clicks.removeWhere(ofLead);
  campaign.replies.removeWhere(ofLead);
  dropPending(account, (event) => event.schedule.lead === lead);
  campaign.sendQueue = null;
  return true;
}

/** A campaign with everything under it. */
export function removeCampaign(account: Account, campaign: CampaignRecord): boolean {
  if (!account.campaigns.remove(campaign)) return false;
  campaign.workspace.campaigns.remove(campaign);
  account.campaignsByUid.delete(campaign.uid);
  for (const lead of campaign.leads.items) account.leadsById.delete(lead.id);
  for (const sequence of campaign.sequences) account.sequencesById.delete(sequence.id);
  dropPending(account, (event) => event.schedule.lead.campaign === campaign);
  return true;
}

/** Drops planned activity; a contact whose planned unsubscribe goes with it unsubscribes only as what is left plans. */
function dropPending(account: Account, dropped: (event: PendingEvent) => boolean): void {
  const kept: PendingEvent[] = [];
  const replanned = new Set<ContactRecord>();
  for (const event of account.pending) {
    if (!dropped(event)) kept.push(event);
    else if (event.kind === "unsubscribe") replanned.add(event.schedule.lead.contact);
  }
  account.pending = kept;
  for (const contact of replanned) delete contact.unsubscribesAt;
  for (const event of kept) {
    const contact = event.schedule.lead.contact;
    if (event.kind === "unsubscribe" && replanned.has(contact)) contact.unsubscribesAt = Math.min(contact.unsubscribesAt ?? Infinity, event.at);
  }
}

/**
 * A domain; callers pick one that no campaign names as a sending domain. Its mailboxes go with it: the leads of
 * campaigns that still send from their workspace's mailboxes get another (a lead sends from a live domain).
 */
export function removeDomain(account: Account, domain: DomainRecord): boolean {
  if (!account.domains.remove(domain)) return false;
  const { workspace } = domain;
  workspace.domains.remove(domain);
  workspace.senders = workspace.senders.filter((sender) => !sender.email.endsWith(`@${domain.domain}`));
  // Only a campaign that names no sending domain sends from its workspace's mailboxes.
  for (const campaign of workspace.campaigns.items) if (!TERMINAL_CAMPAIGN_STATUSES.includes(campaign.status)) reassignSenders(account, campaign);
  return true;
}

/** A contact list; campaigns that selected it no longer do. */
export function removeContactList(account: Account, list: ContactListRecord): boolean {
  if (!account.contactLists.remove(list)) return false;
  list.workspace.contactLists.remove(list);
  for (const campaign of list.workspace.campaigns.items) {
    if (campaign.contactLists.includes(list)) campaign.contactLists = campaign.contactLists.filter((candidate) => candidate !== list);
  }
  return true;
}
