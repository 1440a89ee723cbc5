import type { Lifecycle } from "../upstream/endpoints.ts";
import type { CampaignStatus } from "../upstream/enums.ts";
import type { CampaignSettings } from "../upstream/resources.ts";
import type { SequenceData, UpdateData } from "../upstream/requests.ts";
import { assessSequence } from "./content.ts";
import { DAY_MS } from "./durations.ts";
import { reassignSenders } from "./people.ts";
import { planSchedules } from "./planning.ts";
import type { CampaignRecord, SequenceRecord } from "./store/model.ts";
import { addSequence, removeSequence } from "./store/records.ts";
import type { Account, World } from "./store/world.ts";

/**
 * The write operations of the API, as state changes (contract A.4, A.5).
 * Callers check the rules first (the HTTP layer answers 409 and 400); these
 * functions only apply the effects.
 */

/** Where each lifecycle operation may start from and where it leads. */
export const LIFECYCLE_RULES: Record<Lifecycle, { from: readonly CampaignStatus[]; to: CampaignStatus }> = {
  start: { from: ["created", "scheduled"], to: "running" },
  pause: { from: ["running"], to: "paused" },
  resume: { from: ["paused"], to: "running" },
  cancel: { from: ["created", "scheduled", "running", "paused"], to: "cancelled" },
};

/** Schedules of a campaign that has not started are planned as if it started tomorrow. */
function replanUnstarted(world: World, campaign: CampaignRecord): void {
  planSchedules(campaign, campaign.leads.items, world.now + DAY_MS);
}

export function applyLifecycle(world: World, campaign: CampaignRecord, operation: Lifecycle): void {
  const now = world.now;
  campaign.status = LIFECYCLE_RULES[operation].to;
  switch (operation) {
    case "start":
      campaign.startedRunningAt = now;
      campaign.paused = false;
      planSchedules(campaign, campaign.leads.items, now);
      return;
    case "pause":
      campaign.paused = true;
      campaign.pausedOn = now;
      return;
    case "resume":
      campaign.paused = false;
      // What fell due while paused goes out from now on, within the daily limit and the sending window.
      planSchedules(campaign, campaign.leads.items, now);
      return;
    case "cancel":
      campaign.paused = false;
      campaign.cancelledAt = now;
      for (const lead of campaign.leads.items) for (const schedule of lead.schedules) if (schedule.status === "created") schedule.status = "cancelled";
      campaign.sendQueue = null;
      return;
  }
}

export function updateCampaign(world: World, account: Account, campaign: CampaignRecord, data: UpdateData): void {
  const settings: CampaignSettings = {
    name: data.name,
    reply_to_address: data.reply_to_address,
    daily_email_limit: data.daily_email_limit,
    skip_days: data.skip_days ?? campaign.settings.skip_days,
    single_subject: data.single_subject,
    scheduling_strategy: data.scheduling_strategy,
    from_time: data.from_time,
    to_time: data.to_time,
    time_zone: data.time_zone,
    add_unsub_link: data.add_unsub_link,
    unsub_link_type: data.unsub_link_type,
    custom_unsub_text: data.custom_unsub_text,
    click_tracking_enabled: data.click_tracking_enabled,
    open_tracking_enabled: data.open_tracking_enabled,
    skip_dangerous_emails: data.skip_dangerous_emails,
    skip_disposable_emails: data.skip_disposable_emails,
    skip_catchall_emails: data.skip_catchall_emails,
    skip_full_inbox_emails: data.skip_full_inbox_emails,
    skip_invalid_emails: data.skip_invalid_emails,
    forward_negative_emails: data.forward_negative_emails,
    forward_netural_emails: data.forward_netural_emails,
    sending_domains: data.sending_domains,
  };
  campaign.settings = settings;
  reassignSenders(account, campaign);
  replanUnstarted(world, campaign);
}

export function createSequence(world: World, account: Account, campaign: CampaignRecord, data: SequenceData): SequenceRecord {
  const fields = { subject: data.subject, body: data.body, order: data.order, nextMessageDays: data.next_message_days };
  const sequence = addSequence(world, account, campaign, fields, assessSequence(data.subject, data.body));
  replanUnstarted(world, campaign);
  return sequence;
}

export function deleteSequence(world: World, account: Account, sequence: SequenceRecord): void {
  removeSequence(account, sequence);
  replanUnstarted(world, sequence.campaign);
}
