import type { ReplyClassification } from "../upstream/enums.ts";
import { replyContent } from "./content.ts";
import { HOUR_MS, MINUTE_MS } from "./durations.ts";
import type { Random } from "./random.ts";
import type { PendingEvent, ScheduleRecord } from "./store/model.ts";
import { recordClick, recordOpen, recordReply } from "./store/records.ts";
import type { World } from "./store/world.ts";
import type { Tally } from "./tally.ts";

/**
 * What happens when an email goes out, shared by the generator (which plays a
 * campaign's past) and the simulation (which plays its future): the send
 * itself, and the opens, clicks, replies and unsubscribes it will cause,
 * decided at send time and delivered when the clock reaches them.
 */

const BOUNCE_RATE = 0.03;
const OPEN_RATE = 0.5;
const CLICK_RATE = 0.3;
const REPLY_RATE = 0.25;
const UNSUBSCRIBE_AFTER_NEGATIVE_RATE = 0.5;
const SILENT_UNSUBSCRIBE_RATE = 0.01;
const CLASSIFICATION_WEIGHTS: Record<ReplyClassification, number> = { positive: 3, neutral: 4, negative: 3 };

/** Sends one due schedule; returns the activity it will cause later. */
export function sendSchedule(schedule: ScheduleRecord, sentOn: number, random: Random, tally?: Tally): PendingEvent[] {
  const { contact, campaign } = schedule.lead;
  tally?.changed("schedules", schedule);
  if (contact.bounced || contact.unsubscribed || (contact.unsubscribesAt ?? Infinity) <= sentOn) {
    schedule.status = "cancelled";
    return [];
  }
  const workspace = campaign.workspace;
  workspace.totalEmailsSent++;
  workspace.creditsRemaining = Math.max(0, workspace.creditsRemaining - 1);
  tally?.changed("workspaces", workspace);
  schedule.sentOn = sentOn;
  if (random.chance(BOUNCE_RATE)) {
    schedule.status = "bounced";
    contact.bounced = true;
    campaign.bounces++;
    tally?.changed("contacts", contact);
    tally?.changed("campaigns", campaign);
    return [];
  }
  schedule.status = "sent";
  return planEngagement(schedule, sentOn, random);
}

function planEngagement(schedule: ScheduleRecord, sentOn: number, random: Random): PendingEvent[] {
  const settings = schedule.lead.campaign.settings;
  const events: PendingEvent[] = [];
  const later = (from: number, mean: number) => Math.floor(from + 1_000 + random.exponential(mean));
  if (!random.chance(OPEN_RATE)) {
    if (random.chance(SILENT_UNSUBSCRIBE_RATE)) events.push(unsubscribe(schedule, later(sentOn, 2 * HOUR_MS)));
    return events;
  }
  const firstOpen = later(sentOn, 5 * HOUR_MS);
  if (settings.open_tracking_enabled) {
    let openedAt = firstOpen;
    do {
      events.push({ kind: "open", at: openedAt, schedule });
      openedAt = later(openedAt, 24 * HOUR_MS);
    } while (random.chance(0.4));
  }
  const links = schedule.sequence.links;
  if (settings.click_tracking_enabled && links.length > 0 && random.chance(CLICK_RATE)) {
    let clickedAt = later(firstOpen, 20 * MINUTE_MS);
    for (const link of random.sample(links, random.int(1, 2))) {
      events.push({ kind: "click", at: clickedAt, schedule, link });
      clickedAt = later(clickedAt, 5 * MINUTE_MS);
    }
  }
  if (random.chance(REPLY_RATE)) {
    const classification = random.weighted(CLASSIFICATION_WEIGHTS);
    const receivedAt = later(firstOpen, 6 * HOUR_MS);
    events.push({ kind: "reply", at: receivedAt, schedule, classification });
    if (classification === "negative" && random.chance(UNSUBSCRIBE_AFTER_NEGATIVE_RATE)) {
      events.push(unsubscribe(schedule, receivedAt + MINUTE_MS));
    }
  }
  return events;
}

function unsubscribe(schedule: ScheduleRecord, at: number): PendingEvent {
  const contact = schedule.lead.contact;
  contact.unsubscribesAt = Math.min(contact.unsubscribesAt ?? Infinity, at);
  return { kind: "unsubscribe", at, schedule };
}

export function byTime(a: PendingEvent, b: PendingEvent): number {
  return a.at - b.at;
}

/** Makes one planned event happen. */
export function deliver(world: World, event: PendingEvent, random: Random, tally?: Tally): void {
  const schedule = event.schedule;
  switch (event.kind) {
    case "open": {
      // Opens of one schedule must have distinct times: (schedule_id, opened_on) is their key.
      const open = recordOpen(world, schedule, Math.max(event.at, (schedule.lastOpenedOn ?? -1) + 1));
      tally?.created("email_opens", open);
      tally?.changed("schedules", schedule);
      return;
    }
    case "click": {
      const click = recordClick(world, schedule, event.link, event.at);
      tally?.created("link_clicks", click);
      tally?.changed("schedules", schedule);
      return;
    }
    case "reply": {
      const content = replyContent(random, event.classification, schedule.sequence.subject);
      const reply = recordReply(world, schedule, content, event.classification, event.at);
      tally?.created("replies", reply);
      tally?.changed("schedules", schedule);
      tally?.changed("workspaces", schedule.lead.campaign.workspace);
      return;
    }
    case "unsubscribe": {
      const contact = schedule.lead.contact;
      if (contact.unsubscribed) return;
      contact.unsubscribed = true;
      tally?.changed("contacts", contact);
      return;
    }
  }
}
