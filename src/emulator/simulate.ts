import { byTime, deliver, sendSchedule } from "./activity.ts";
import { joinLeads } from "./arrivals.ts";
import { DAY_MS, HOUR_MS, MINUTE_MS } from "./durations.ts";
import type { AdvanceReport } from "./options.ts";
import { planSchedules } from "./planning.ts";
import { CREDITS_BY_PLAN, addDomain } from "./seed/workspaces.ts";
import type { CampaignRecord, DomainRecord, ScheduleRecord, WorkspaceRecord } from "./store/model.ts";
import { generateSchedules } from "./store/records.ts";
import { removeDomain } from "./store/removals.ts";
import { iso } from "./store/render.ts";
import type { Account, World } from "./store/world.ts";
import { Tally } from "./tally.ts";

/**
 * The simulated clock. advance(seconds) plays every account forward, one day
 * at most per step so that causes come before their effects: campaigns in
 * `creating` get their schedules, `scheduled` ones start, running ones send
 * what is due and gain new leads (for their first weeks), planned opens, clicks, replies and
 * unsubscribes arrive, campaigns with nothing left to send complete, and
 * domains finish setting up, warm up, or get deleted (and then vanish from
 * the listing, for soft-delete tests).
 */

const SCHEDULE_GENERATION_MS = 10 * MINUTE_MS;
const NEW_LEADS_PER_DAY = 2;
/** Leads keep joining a running campaign for this long after its start, while its contact lists import. */
const LEAD_IMPORT_DAYS = 21;
const DOMAIN_SETUP_MS = HOUR_MS;
const DOMAIN_DELETION_MS = HOUR_MS;
const CONTACT_LIST_IMPORT_MS = 30 * MINUTE_MS;
const DOMAIN_DELETIONS_PER_DAY = 0.5;
const NEW_DOMAINS_PER_DAY = 0.3;

export function advance(world: World, seconds: number): AdvanceReport {
  const tally = new Tally();
  const from = world.now;
  const to = from + Math.round(seconds * 1000);
  for (let start = from; start < to; ) {
    const end = Math.min(to, start + DAY_MS);
    world.now = end;
    for (const account of world.accounts.values()) step(world, account, from, start, end, tally);
    start = end;
  }
  world.now = to;
  if (to > from) for (const account of world.accounts.values()) settle(world, account, from, to, tally);
  return tally.report(iso(to));
}

/** How many times an event with this daily rate happens in `ms`, drawn so that fractions add up over time. */
function occurrences(account: Account, perDay: number, ms: number): number {
  const expected = (perDay * ms) / DAY_MS;
  return Math.floor(expected + account.random.next());
}

function step(world: World, account: Account, from: number, start: number, end: number, tally: Tally): void {
  for (const campaign of account.campaigns.items) {
    if (campaign.status === "creating" && campaign.createdOn + SCHEDULE_GENERATION_MS <= end) finishGeneration(world, campaign, Math.max(start, campaign.createdOn + SCHEDULE_GENERATION_MS), tally);
    if (campaign.status === "scheduled" && campaign.scheduledStart !== null && campaign.scheduledStart <= end) {
      campaign.status = "running";
      campaign.startedRunningAt = campaign.scheduledStart;
      tally.changed("campaigns", campaign);
    }
  }
  const running = account.campaigns.items.filter((campaign) => campaign.status === "running");
  for (const campaign of running) {
    const importing = campaign.startedRunningAt !== null && end <= campaign.startedRunningAt + LEAD_IMPORT_DAYS * DAY_MS && hasUnsent(campaign);
    const joining = importing ? occurrences(account, NEW_LEADS_PER_DAY, end - start) : 0;
    if (joining > 0) {
      // Leads join while the campaign runs: never planned before it started (it may have started within this step).
      const joinedAt = Math.max(start + Math.floor(account.random.next() * (end - start)), campaign.startedRunningAt ?? start);
      joinLeads(world, account, campaign, joining, joinedAt, account.random, tally);
    }
  }
  const lastSent = sendDue(account, running, from, end, tally);
  deliverDue(world, account, end, tally);
  for (const campaign of account.campaigns.items) {
    if (campaign.status !== "running" || hasUnsent(campaign)) continue;
    campaign.status = "complete";
    campaign.completedAt = lastSent.get(campaign) ?? end;
    tally.changed("campaigns", campaign);
  }
}

function finishGeneration(world: World, campaign: CampaignRecord, at: number, tally: Tally): void {
  for (const lead of campaign.leads.items) {
    generateSchedules(world, lead);
    for (const schedule of lead.schedules) tally.created("schedules", schedule);
  }
  campaign.status = "created";
  campaign.generatingSchedules = false;
  planSchedules(campaign, campaign.leads.items, at + DAY_MS);
  tally.changed("campaigns", campaign);
}

function sendQueue(campaign: CampaignRecord): ScheduleRecord[] {
  if (campaign.sendQueue) return campaign.sendQueue;
  const queue: ScheduleRecord[] = [];
  for (const lead of campaign.leads.items) for (const schedule of lead.schedules) if (schedule.status === "created") queue.push(schedule);
  queue.sort((a, b) => a.at - b.at || a.id - b.id);
  campaign.sendQueue = queue;
  campaign.sendQueueHead = 0;
  return queue;
}

function hasUnsent(campaign: CampaignRecord): boolean {
  const queue = sendQueue(campaign);
  while (campaign.sendQueueHead < queue.length && queue[campaign.sendQueueHead]?.status !== "created") campaign.sendQueueHead++;
  return campaign.sendQueueHead < queue.length;
}

/**
 * Sends what the campaigns have due by `end`, in time order across them (they share contacts: a bounce in one
 * stops the others' later emails to that contact, not their earlier ones); answers each campaign's last send.
 * Overdue emails go out just after `from`.
 */
function sendDue(account: Account, campaigns: readonly CampaignRecord[], from: number, end: number, tally: Tally): Map<CampaignRecord, number> {
  const lastSent = new Map<CampaignRecord, number>();
  for (;;) {
    let sender: CampaignRecord | undefined;
    let next: ScheduleRecord | undefined;
    for (const campaign of campaigns) {
      if (!hasUnsent(campaign)) continue;
      const schedule = sendQueue(campaign)[campaign.sendQueueHead] as ScheduleRecord;
      if (schedule.at <= end && (next === undefined || schedule.at < next.at || (schedule.at === next.at && schedule.id < next.id))) {
        sender = campaign;
        next = schedule;
      }
    }
    if (sender === undefined || next === undefined) return lastSent;
    sender.sendQueueHead++;
    const sentOn = Math.max(next.at, from + 1);
    for (const event of sendSchedule(next, sentOn, account.random, tally)) account.pending.push(event);
    if (next.sentOn !== null) lastSent.set(sender, Math.max(lastSent.get(sender) ?? sentOn, sentOn));
  }
}

function deliverDue(world: World, account: Account, end: number, tally: Tally): void {
  account.pending.sort(byTime);
  let due = 0;
  while (due < account.pending.length && (account.pending[due]?.at ?? Infinity) <= end) due++;
  for (const event of account.pending.splice(0, due)) deliver(world, event, account.random, tally);
}

/** Slow-moving state, settled once per advance: domains, contact lists, subscriptions. */
function settle(world: World, account: Account, from: number, to: number, tally: Tally): void {
  const days = Math.floor(to / DAY_MS) - Math.floor(from / DAY_MS);
  for (const domain of [...account.domains.items]) settleDomain(account, domain, days, to, tally);
  for (const list of account.contactLists.items) {
    if (list.status === "processing" && list.createdOn + CONTACT_LIST_IMPORT_MS <= to) {
      list.status = "ready";
      tally.changed("contact_lists", list);
    }
  }
  for (const workspace of account.workspaces.items) renew(workspace, to, tally);
  const workspaces = account.workspaces.items;
  for (let count = occurrences(account, DOMAIN_DELETIONS_PER_DAY, to - from); count > 0; count--) startDeletion(account, to, tally);
  for (let count = occurrences(account, NEW_DOMAINS_PER_DAY, to - from); count > 0 && workspaces.length > 0; count--) {
    const domain = addDomain(world, account, account.random.pick(workspaces), account.random, "creating");
    domain.createdOn = to;
    tally.created("domains", domain);
  }
}

function settleDomain(account: Account, domain: DomainRecord, days: number, to: number, tally: Tally): void {
  if ((domain.status === "creating" || domain.status === "verifying") && domain.createdOn + DOMAIN_SETUP_MS <= to) {
    domain.status = "active";
    domain.setupComplete = true;
    tally.changed("domains", domain);
  }
  if (domain.status === "active" && days > 0) {
    domain.warmupActiveDays += days;
    domain.warmupDaysRemaining = Math.max(0, domain.warmupDaysRemaining - days);
    tally.changed("domains", domain);
  }
  if (domain.status === "deleting" && domain.deletionStartedOn !== null && domain.deletionStartedOn + DOMAIN_DELETION_MS <= to) {
    removeDomain(account, domain);
    tally.changed("domains", domain);
  }
}

/** Deletes an active domain that no campaign sends from. */
function startDeletion(account: Account, at: number, tally: Tally): void {
  const used = new Set(account.campaigns.items.flatMap((campaign) => campaign.settings.sending_domains));
  const candidates = account.domains.items.filter((domain) => domain.status === "active" && !used.has(domain.id));
  if (candidates.length === 0) return;
  const domain = account.random.pick(candidates);
  domain.status = "deleting";
  domain.deletionStartedOn = at;
  tally.changed("domains", domain);
}

/** Every plan renews at the end of its billing period, free ones included, and its credits are restored. */
function renew(workspace: WorkspaceRecord, to: number, tally: Tally): void {
  if (workspace.nextRenewalDate > to) return;
  const period = (workspace.billingPeriod === "monthly" ? 30 : 365) * DAY_MS;
  while (workspace.nextRenewalDate <= to) workspace.nextRenewalDate += period;
  workspace.creditsRemaining = Math.max(workspace.creditsRemaining, CREDITS_BY_PLAN[workspace.subscriptionPlan]);
  tally.changed("workspaces", workspace);
}
