import type { Random } from "./random.ts";
import { COMPANY_DOMAINS, FIRST_NAMES, LAST_NAMES, MAILBOX_NAMES, MAILBOX_SURNAMES } from "./seed/vocabulary.ts";
import type { CampaignRecord, ContactRecord, Sender, WorkspaceRecord } from "./store/model.ts";
import type { World } from "./store/world.ts";

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

/** Mailboxes on the campaign's sending domains, or on any domain of its workspace when it names none. */
export function campaignSenders(campaign: CampaignRecord): Sender[] {
  const chosen = campaign.workspace.domains.items.filter((domain) => campaign.settings.sending_domains.includes(domain.id));
  const senders = campaign.workspace.senders.filter((sender) => chosen.some((domain) => sender.email.endsWith(`@${domain.domain}`)));
  return senders.length > 0 ? senders : campaign.workspace.senders;
}
