import { byTime, deliver, sendSchedule } from "../activity.ts";
import type { Random } from "../random.ts";
import type { CampaignRecord, PendingEvent } from "../store/model.ts";
import type { Account, World } from "../store/world.ts";

/**
 * Plays a generated campaign's past: schedules due before `cutoff` are sent
 * (as the simulation would have sent them), the rest stay unsent (`created`)
 * or are stopped (`cancelled`). Activity that falls before now happens, in
 * time order; activity after now waits for the simulation.
 */
export function playHistory(
  world: World,
  account: Account,
  campaign: CampaignRecord,
  random: Random,
  cutoff: number,
  unsent: "created" | "cancelled",
): void {
  const events: PendingEvent[] = [];
  for (const lead of campaign.leads.items) {
    for (const schedule of lead.schedules) {
      if (schedule.at <= cutoff) {
        for (const event of sendSchedule(schedule, schedule.at, random)) events.push(event);
      } else if (unsent === "cancelled") {
        schedule.status = "cancelled";
      }
    }
  }
  events.sort(byTime);
  for (const event of events) {
    if (event.at <= world.now) deliver(world, event, random);
    else account.pending.push(event);
  }
}
