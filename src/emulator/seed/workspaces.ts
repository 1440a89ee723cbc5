import type { BillingPeriod } from "../../upstream/enums.ts";
import { DAY_MS, MINUTE_MS } from "../durations.ts";
import { createSenders } from "../people.ts";
import type { Random } from "../random.ts";
import { Collection } from "../store/collection.ts";
import {
  CONTACT_LIST_SOURCES,
  CONTACT_LIST_STATUSES,
  DOMAIN_STATUSES,
  SUBSCRIPTION_PLANS,
  type ContactListRecord,
  type DomainRecord,
  type DomainStatus,
  type SubscriptionPlan,
  type WorkspaceRecord,
} from "../store/model.ts";
import type { Account, World } from "../store/world.ts";
import type { ScaleProfile } from "./scales.ts";
import {
  COMPANY_DOMAINS,
  CONTACT_LIST_COLUMNS,
  CONTACT_LIST_NAMES,
  SENDING_DOMAIN_TLDS,
  SENDING_DOMAIN_WORDS,
  TIME_ZONES,
  WORKSPACE_NAMES,
} from "./vocabulary.ts";

/** Generates an account's workspaces with their sending domains and contact lists. */

/** Credits a plan grants at each renewal. */
export const CREDITS_BY_PLAN: Record<SubscriptionPlan, number> = {
  free: 2_000,
  starter: 20_000,
  growth: 100_000,
  scale: 500_000,
  enterprise: 2_000_000,
};
/** The first domains of an account take these statuses, so every one appears; `deleting` is added apart. */
const FIRST_DOMAIN_STATUSES: readonly DomainStatus[] = DOMAIN_STATUSES.filter((status) => status !== "deleting");

export function seedWorkspaces(world: World, account: Account, random: Random, profile: ScaleProfile): void {
  const count = random.int(...profile.workspaces);
  for (let position = 0; position < count; position++) {
    const workspace = createWorkspace(world, random, position);
    account.workspaces.push(workspace);
    for (let index = random.int(...profile.domainsPerWorkspace); index > 0; index--) addDomain(world, account, workspace, random, nextDomainStatus(account, random));
    for (let index = random.int(...profile.contactListsPerWorkspace); index > 0; index--) addContactList(world, account, workspace, random);
  }
  // One domain is already being deleted, so the first simulation step removes it from the listing.
  const first = account.workspaces.items[0] as WorkspaceRecord;
  const doomed = addDomain(world, account, first, random, "active");
  doomed.status = "deleting";
  doomed.deletionStartedOn = world.now - 30 * MINUTE_MS;
}

function createWorkspace(world: World, random: Random, position: number): WorkspaceRecord {
  // The second workspace is on the free plan.
  const plan = position === 1 ? "free" : position === 0 ? "growth" : random.pick(SUBSCRIPTION_PLANS);
  const billingPeriod: BillingPeriod = position % 2 === 0 ? "monthly" : "annual";
  const renewalDays = billingPeriod === "monthly" ? 30 : 365;
  const createdOn = world.now - random.int(400, 900) * DAY_MS - random.int(0, DAY_MS);
  return {
    id: world.ids.take("workspace"),
    createdOn,
    subscriptionPlan: plan,
    name: WORKSPACE_NAMES[(world.accounts.size + position) % WORKSPACE_NAMES.length] as string,
    creditsRemaining: CREDITS_BY_PLAN[plan] - random.int(0, CREDITS_BY_PLAN[plan] / 10),
    nextRenewalDate: plan === "free" ? endOfFreePeriod(createdOn, renewalDays, world.now) : world.now + random.int(1, renewalDays) * DAY_MS + random.int(0, DAY_MS),
    billingPeriod,
    timeZone: random.pick(TIME_ZONES),
    totalEmailsSent: random.int(0, 5_000),
    totalRepliesReceived: random.int(0, 150),
    campaigns: new Collection((campaign) => campaign.serial),
    domains: new Collection((domain) => domain.id),
    contactLists: new Collection((list) => list.serial),
    contacts: [],
    senders: [],
  };
}

/**
 * Spec 2.13 shows next_renewal_date as a date-time, so a free plan has one too: the end of its current
 * free period. Free periods follow one another from the workspace's creation, one billing period each,
 * and each restores the free credits.
 */
function endOfFreePeriod(createdOn: number, periodDays: number, now: number): number {
  const period = periodDays * DAY_MS;
  return createdOn + (Math.floor((now - createdOn) / period) + 1) * period;
}

function nextDomainStatus(account: Account, random: Random): DomainStatus {
  const forced = FIRST_DOMAIN_STATUSES[account.domains.length];
  return forced ?? random.weighted({ active: 8, verifying: 1, failed: 1 });
}

export function addDomain(world: World, account: Account, workspace: WorkspaceRecord, random: Random, status: DomainStatus): DomainRecord {
  const id = world.ids.take("domain");
  const name = `${random.pick(SENDING_DOMAIN_WORDS)}-${id}.${random.pick(SENDING_DOMAIN_TLDS)}`;
  const settled = status === "active" || status === "failed";
  const custom = account.domains.length % 2 === 1;
  const domain: DomainRecord = {
    id,
    workspace,
    domain: name,
    status,
    createdOn: settled ? workspace.createdOn + random.int(1, 300) * DAY_MS + random.int(0, DAY_MS) : world.now - random.int(5, 50) * MINUTE_MS,
    deletionStartedOn: null,
    setupComplete: status === "active",
    namingStrategy: custom ? "custom" : "random",
    customName: custom ? `${random.pick(["Sales", "Équipe", "営業", "Growth"])} team` : "",
    warmupDaysRemaining: status === "active" ? random.int(0, 30) : 30,
    redirectSubdomainsTo: random.chance(0.5) ? `https://www.${random.pick(COMPANY_DOMAINS)}` : "",
    warmupActiveDays: status === "active" ? random.int(0, 120) : 0,
  };
  account.domains.push(domain);
  workspace.domains.push(domain);
  workspace.senders.push(...createSenders(name, random, 2));
  return domain;
}

export function addContactList(world: World, account: Account, workspace: WorkspaceRecord, random: Random, forcedStatus?: string): ContactListRecord {
  const serial = world.ids.take("contactList");
  const position = account.contactLists.length;
  const status = forcedStatus ?? CONTACT_LIST_STATUSES[position] ?? random.weighted({ ready: 8, processing: 1, failed: 1 });
  const hasUnsubscribeColumn = position % 2 === 0;
  const list: ContactListRecord = {
    serial,
    uid: world.uids.encode("contactList", serial),
    workspace,
    name: CONTACT_LIST_NAMES[position % CONTACT_LIST_NAMES.length] as string,
    createdOn: status === "processing" ? world.now - random.int(1, 20) * MINUTE_MS : workspace.createdOn + random.int(0, 30) * DAY_MS + random.int(0, DAY_MS),
    status,
    source: CONTACT_LIST_SOURCES[position % CONTACT_LIST_SOURCES.length] as string,
    availableColumns: random.sample(CONTACT_LIST_COLUMNS, random.int(2, CONTACT_LIST_COLUMNS.length)),
    hasUnsubscribeColumn,
    unsubscribeColumnName: hasUnsubscribeColumn ? "unsubscribed" : "",
  };
  account.contactLists.push(list);
  workspace.contactLists.push(list);
  return list;
}
