import { TERMINAL_CAMPAIGN_STATUSES } from "../upstream/enums.ts";
import { DAY_MS } from "./durations.ts";
import { campaignSenders, createContact } from "./people.ts";
import { planSchedules } from "./planning.ts";
import type { Random } from "./random.ts";
import { SCALES } from "./seed/scales.ts";
import { seedCampaign } from "./seed/campaigns.ts";
import { addContactList, addDomain } from "./seed/workspaces.ts";
import type { CampaignRecord, LeadRecord, ScheduleRecord, WorkspaceRecord } from "./store/model.ts";
import { addLead, recordClick, recordOpen } from "./store/records.ts";
import type { Account, World } from "./store/world.ts";
import type { Tally } from "./tally.ts";

/**
 * Records that appear on their own: leads joining a campaign (its contact
 * lists keep importing), and, as injected faults, records that arrive
 * between two page requests of a client's walk. Late events are dated in the
 * past, so they land inside time-ordered listings and shift every offset.
 */

/** New leads with new contacts; unless schedules are still being generated, planned from `at`. */
export function joinLeads(world: World, account: Account, campaign: CampaignRecord, count: number, at: number, random: Random, tally?: Tally): LeadRecord[] {
  const senders = campaignSenders(account, campaign);
  const leads: LeadRecord[] = [];
  for (let index = 0; index < count; index++) {
    const contact = createContact(world, campaign.workspace, random);
    const lead = addLead(world, account, campaign, contact, random.pick(senders), !campaign.generatingSchedules);
    leads.push(lead);
    tally?.created("contacts", contact);
    tally?.created("leads", lead);
    for (const schedule of lead.schedules) tally?.created("schedules", schedule);
  }
  if (!campaign.generatingSchedules) planSchedules(campaign, leads, at);
  return leads;
}

function sentSchedule(campaign: CampaignRecord, random: Random): ScheduleRecord | undefined {
  const leads = campaign.leads.items;
  for (let attempt = 0; attempt < 40 && leads.length > 0; attempt++) {
    const lead = random.pick(leads);
    const sent = lead.schedules.filter((schedule) => schedule.status === "sent" && schedule.sentOn !== null);
    if (sent.length > 0) return random.pick(sent);
  }
  return undefined;
}

/** When a late event of this kind may happen to the schedule: after its send (and after its last open, for opens), up to now. */
function lateEventTime(world: World, schedule: ScheduleRecord, kind: "open" | "click", random: Random): number | undefined {
  if (schedule.sentOn === null) return undefined;
  const earliest = (kind === "open" ? Math.max(schedule.sentOn, schedule.lastOpenedOn ?? 0) : schedule.sentOn) + 1;
  return earliest < world.now ? random.int(earliest, world.now) : undefined;
}

/** Whether the campaign records events of this kind at all: only with its tracking on, and a click only on an email's own links. */
function tracks(campaign: CampaignRecord, kind: "open" | "click"): boolean {
  return kind === "open" ? campaign.settings.open_tracking_enabled : campaign.settings.click_tracking_enabled;
}

/** A sent email of the campaign that may gain a late event of this kind. */
function trackedSchedule(campaign: CampaignRecord, kind: "open" | "click", random: Random): ScheduleRecord | undefined {
  if (!tracks(campaign, kind)) return undefined;
  const schedule = sentSchedule(campaign, random);
  return schedule && (kind === "open" || schedule.sequence.links.length > 0) ? schedule : undefined;
}

/** A late open or click on an already sent email, dated between its send and now. */
export function arriveLateEvent(world: World, campaign: CampaignRecord, kind: "open" | "click", random: Random): boolean {
  const schedule = trackedSchedule(campaign, kind, random);
  const at = schedule && lateEventTime(world, schedule, kind, random);
  if (!schedule || at === undefined) return false;
  if (kind === "open") recordOpen(world, schedule, at);
  else recordClick(world, schedule, random.pick(schedule.sequence.links), at);
  return true;
}

/**
 * Two late events of one schedule within one millisecond (the sub-millisecond fault), recorded to the
 * microsecond: opens at ….123456Z and ….123789Z, or two clicks of one link. A copy that keeps times
 * to the millisecond merges them into one. Dated, counted and nested like any late event.
 */
export function arriveSubMillisecondEvents(world: World, campaign: CampaignRecord, kind: "open" | "click", random: Random): boolean {
  const schedule = trackedSchedule(campaign, kind, random);
  const at = schedule && lateEventTime(world, schedule, kind, random);
  if (!schedule || at === undefined) return false;
  const earlier = random.int(1, 998);
  const micros = [earlier, random.int(earlier + 1, 999)];
  const link = kind === "click" ? random.pick(schedule.sequence.links) : "";
  for (const part of micros) {
    if (kind === "open") recordOpen(world, schedule, at, part);
    else recordClick(world, schedule, link, at, part);
  }
  return true;
}

/** A lead added between two page requests; campaigns that can no longer gain leads gain nothing. */
export function arriveLead(world: World, account: Account, campaign: CampaignRecord, random: Random): boolean {
  if (TERMINAL_CAMPAIGN_STATUSES.includes(campaign.status)) return false;
  joinLeads(world, account, campaign, 1, plannedFrom(world, campaign), random);
  return true;
}

/** Where a lead joining now is planned from: a campaign that has not started sends from its start (or, unscheduled, tomorrow). */
function plannedFrom(world: World, campaign: CampaignRecord): number {
  if (campaign.status === "running" || campaign.status === "paused") return world.now;
  if (campaign.status === "scheduled" && campaign.scheduledStart !== null) return Math.max(world.now, campaign.scheduledStart);
  return world.now + DAY_MS;
}

/** A campaign, domain or contact list created by someone else while the client pages. */
export function arriveAccountRecord(world: World, account: Account, kind: "campaign" | "domain" | "contactList", workspace: WorkspaceRecord, random: Random): void {
  switch (kind) {
    case "campaign": {
      const profile = { ...SCALES.small, leadsPerCampaign: [1, 5] as [number, number] };
      // A campaign being created has no past to play.
      seedCampaign(world, account, workspace, random, profile, "creating", account.campaigns.length, []).createdOn = world.now;
      return;
    }
    case "domain": {
      addDomain(world, account, workspace, random, "creating").createdOn = world.now;
      return;
    }
    case "contactList": {
      const list = addContactList(world, account, workspace, random, "processing");
      list.createdOn = world.now;
      return;
    }
  }
}
