import { hash32, type Random } from "./random.ts";
import { COMPANY_DOMAINS, FIRST_NAMES, LAST_NAMES, MAILBOX_NAMES, MAILBOX_SURNAMES } from "./seed/vocabulary.ts";
import type { CampaignRecord, ContactRecord, DomainRecord, Sender, WorkspaceRecord } from "./store/model.ts";
import type { Account, World } from "./store/world.ts";

/** Contacts (the people emailed) and senders (the mailboxes emailing them). */

export function createContact(world: World, workspace: WorkspaceRecord, random: Random): ContactRecord {
  const id = world.ids.take("contact");
  // The id in the address keeps addresses unique within a workspace.
  const email = `${random.pick(MAILBOX_NAMES)}.${random.pick(MAILBOX_SURNAMES)}.${id}@${random.pick(COMPANY_DOMAINS)}`;
  const contact: ContactRecord = { id, email, bounced: false, unsubscribed: false };
  workspace.contacts.push(contact);
  return contact;
}

export function createSenders(domain: string, random: Random, count: number): Sender[] {
  return Array.from({ length: count }, () => {
    const index = random.int(0, FIRST_NAMES.length - 1);
    const surname = random.int(0, LAST_NAMES.length - 1);
    return {
      email: `${MAILBOX_NAMES[index]}.${MAILBOX_SURNAMES[surname]}@${domain}`,
      name: `${FIRST_NAMES[index]} ${LAST_NAMES[surname]}`,
    };
  });
}

/**
 * Mailboxes on the campaign's sending domains, or on an active domain of its workspace when it names none
 * (on any of its domains when none is active). A sending domain may belong to another workspace of the
 * account (update campaign accepts one), so the domains are looked up in the account; the campaign's own
 * workspace's mailboxes come first.
 */
export function campaignSenders(account: Account, campaign: CampaignRecord): Sender[] {
  const chosen = account.domains.items.filter((domain) => campaign.settings.sending_domains.includes(domain.id));
  const holders = new Set([campaign.workspace, ...chosen.map((domain) => domain.workspace)]);
  const senders = [...holders].flatMap((workspace) => sendersOn(workspace, chosen));
  if (senders.length > 0) return senders;
  const active = sendersOn(campaign.workspace, campaign.workspace.domains.items.filter((domain) => domain.status === "active"));
  return active.length > 0 ? active : campaign.workspace.senders;
}

function sendersOn(workspace: WorkspaceRecord, domains: readonly DomainRecord[]): Sender[] {
  return workspace.senders.filter((sender) => domains.some((domain) => domain.workspace === workspace && sender.email.endsWith(`@${domain.domain}`)));
}

/**
 * After a change of sending domains (update campaign, which only an unstarted campaign takes), each
 * lead whose mailbox is not on one of them gets one that is, picked by a hash of the lead's id.
 */
export function reassignSenders(account: Account, campaign: CampaignRecord): void {
  const senders = campaignSenders(account, campaign);
  if (senders.length === 0) return;
  const addresses = new Set(senders.map((sender) => sender.email));
  for (const lead of campaign.leads.items) {
    if (!addresses.has(lead.sender.email)) lead.sender = senders[hash32(lead.id) % senders.length] as Sender;
  }
}
