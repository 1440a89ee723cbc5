import { byTime, deliver, sendSchedule } from "../activity.ts";
import type { Random } from "../random.ts";
import type { CampaignRecord, PendingEvent, ScheduleRecord } from "../store/model.ts";
import type { Account, World } from "../store/world.ts";

/** A generated campaign's past: its schedules due by `cutoff` were sent; the rest stay unsent (`created`) or were stopped (`cancelled`). */
export interface HistoryPlay {
  campaign: CampaignRecord;
  cutoff: number;
  unsent: "created" | "cancelled";
}

/**
 * Plays the past of an account's generated campaigns together, every send in
 * time order whichever campaign makes it, as the simulation sends: campaigns
 * share contacts, and a contact that bounced or unsubscribed in one stops the
 * others' later emails to it, never their earlier ones. Activity that falls
 * before now happens, in time order; activity after now waits for the
 * simulation. A complete campaign completed with the last email it sent.
 */
export function playHistories(world: World, account: Account, plays: readonly HistoryPlay[], random: Random): void {
  const sends: ScheduleRecord[] = [];
  for (const { campaign, cutoff, unsent } of plays) {
    for (const lead of campaign.leads.items) {
      for (const schedule of lead.schedules) {
        if (schedule.at <= cutoff) sends.push(schedule);
        else if (unsent === "cancelled") schedule.status = "cancelled";
      }
    }
  }
  sends.sort((a, b) => a.at - b.at || a.id - b.id);
  const events: PendingEvent[] = [];
  for (const schedule of sends) for (const event of sendSchedule(schedule, schedule.at, random)) events.push(event);
  events.sort(byTime);
  for (const event of events) {
    if (event.at <= world.now) deliver(world, event, random);
    else account.pending.push(event);
  }
  for (const { campaign } of plays) if (campaign.status === "complete") campaign.completedAt = lastEmailOf(campaign);
}

function lastEmailOf(campaign: CampaignRecord): number {
  let last = campaign.startedRunningAt ?? campaign.createdOn;
  for (const lead of campaign.leads.items) for (const schedule of lead.schedules) if (schedule.sentOn !== null) last = Math.max(last, schedule.sentOn);
  return last;
}
