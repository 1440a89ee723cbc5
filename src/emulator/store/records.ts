import type { ReplyClassification } from "../../upstream/enums.ts";
import type { ReplyContent, SequenceAssessment } from "../content.ts";
import { replySubject } from "../content.ts";
import { Collection } from "./collection.ts";
import type {
  CampaignRecord,
  ClickRecord,
  ContactRecord,
  LeadRecord,
  OpenRecord,
  ReplyRecord,
  ScheduleRecord,
  Sender,
  SequenceRecord,
} from "./model.ts";
import type { Account, World } from "./world.ts";

/**
 * The only places records are created or removed (deletions: removals.ts),
 * so that every index (the account's maps, the campaign's listings, a
 * schedule's nested lists) stays in step with the others.
 */

export function campaignCollections(): Pick<CampaignRecord, "leads" | "replies" | "clicks" | "opens"> {
  return {
    leads: new Collection((lead) => lead.id),
    replies: new Collection((reply) => reply.id),
    clicks: new Collection((click) => click.id),
    opens: new Collection((open) => open.serial),
  };
}

function newSchedule(world: World, lead: LeadRecord, sequence: SequenceRecord): ScheduleRecord {
  return {
    id: world.ids.take("schedule"),
    lead,
    sequence,
    status: "created",
    at: world.now,
    sentOn: null,
    openCount: 0,
    firstOpenedOn: null,
    lastOpenedOn: null,
    clicks: null,
    replies: null,
  };
}

/** A lead with one unsent schedule per email sequence (none while schedules are not generated yet). */
export function addLead(world: World, account: Account, campaign: CampaignRecord, contact: ContactRecord, sender: Sender, withSchedules = true): LeadRecord {
  const lead: LeadRecord = { id: world.ids.take("lead"), campaign, contact, sender, schedules: [] };
  if (withSchedules) lead.schedules = campaign.sequences.map((sequence) => newSchedule(world, lead, sequence));
  account.leadsById.set(lead.id, lead);
  campaign.leads.push(lead);
  campaign.sendQueue = null;
  return lead;
}

export function generateSchedules(world: World, lead: LeadRecord): void {
  lead.schedules = lead.campaign.sequences.map((sequence) => newSchedule(world, lead, sequence));
  lead.campaign.sendQueue = null;
}

interface SequenceFields {
  subject: string;
  body: string;
  order: number;
  nextMessageDays: number;
}

function bySequenceOrder(a: SequenceRecord, b: SequenceRecord): number {
  return a.order - b.order || a.id - b.id;
}

/** Adds a sequence; unless schedules are still being generated, every lead gets one for it, in sequence order. */
export function addSequence(world: World, account: Account, campaign: CampaignRecord, fields: SequenceFields, assessment: SequenceAssessment): SequenceRecord {
  const sequence: SequenceRecord = {
    id: world.ids.take("sequence"),
    campaign,
    subject: fields.subject,
    body: fields.body,
    order: fields.order,
    nextMessageDays: fields.nextMessageDays,
    score: assessment.score,
    verdict: assessment.verdict,
    suggestions: assessment.suggestions,
    label: assessment.label,
    blockedReason: assessment.blockedReason,
    flaggedForApproval: assessment.flaggedForApproval,
    blockApproval: false,
    contentType: assessment.contentType,
    links: assessment.links,
  };
  campaign.sequences.push(sequence);
  campaign.sequences.sort(bySequenceOrder);
  account.sequencesById.set(sequence.id, sequence);
  const position = campaign.sequences.indexOf(sequence);
  if (!campaign.generatingSchedules) {
    for (const lead of campaign.leads.items) lead.schedules.splice(position, 0, newSchedule(world, lead, sequence));
  }
  campaign.sendQueue = null;
  return sequence;
}

export function removeSequence(account: Account, sequence: SequenceRecord): void {
  const campaign = sequence.campaign;
  campaign.sequences = campaign.sequences.filter((candidate) => candidate !== sequence);
  account.sequencesById.delete(sequence.id);
  for (const lead of campaign.leads.items) lead.schedules = lead.schedules.filter((schedule) => schedule.sequence !== sequence);
  campaign.sendQueue = null;
}

/** Where an event goes in its time-ordered listing: appended when it is the newest, else in time order. */
function insertByTime<T>(collection: Collection<T>, record: T, timeOf: (record: T) => number): void {
  const items = collection.items;
  const time = timeOf(record);
  const last = items.at(-1);
  if (last === undefined || timeOf(last) <= time) {
    collection.push(record);
    return;
  }
  let low = 0;
  let high = items.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (timeOf(items[middle] as T) <= time) low = middle + 1;
    else high = middle;
  }
  collection.insertAt(low, record);
}

/** An event's time in microseconds, so that events of one millisecond keep their order. */
const openTime = (open: OpenRecord) => open.openedOn * 1000 + (open.micros ?? 0);
const clickTime = (click: ClickRecord) => click.clickedOn * 1000 + (click.micros ?? 0);

/** `micros` (1..999) records the open to the microsecond (the sub-millisecond fault); usually absent. */
export function recordOpen(world: World, schedule: ScheduleRecord, at: number, micros?: number): OpenRecord {
  const open: OpenRecord = { serial: world.ids.take("open"), schedule, openedOn: at };
  if (micros !== undefined) open.micros = micros;
  schedule.openCount++;
  if (schedule.firstOpenedOn === null || openTime(open) < schedule.firstOpenedOn * 1000 + (schedule.firstOpenedMicros ?? 0)) {
    schedule.firstOpenedOn = at;
    // Set only on the few schedules that need it, so that the others keep their shape.
    if (micros !== undefined) schedule.firstOpenedMicros = micros;
    else if (schedule.firstOpenedMicros !== undefined) delete schedule.firstOpenedMicros;
  }
  if (schedule.lastOpenedOn === null || at > schedule.lastOpenedOn) schedule.lastOpenedOn = at;
  insertByTime(schedule.lead.campaign.opens, open, openTime);
  return open;
}

export function recordClick(world: World, schedule: ScheduleRecord, link: string, at: number, micros?: number): ClickRecord {
  const clicks = (schedule.clicks ??= []);
  // (schedule_id, link, clicked_on) is the listing's natural key: keep it unique.
  let clickedOn = at;
  while (clicks.some((click) => click.link === link && click.clickedOn === clickedOn && click.micros === micros)) clickedOn++;
  const click: ClickRecord = { id: world.ids.take("click"), schedule, link, clickedOn };
  if (micros !== undefined) click.micros = micros;
  clicks.push(click);
  insertByTime(schedule.lead.campaign.clicks, click, clickTime);
  return click;
}

export function recordReply(world: World, schedule: ScheduleRecord, content: ReplyContent, classification: ReplyClassification, at: number): ReplyRecord {
  const reply: ReplyRecord = {
    id: world.ids.take("reply"),
    schedule,
    bodyPlainText: content.bodyPlainText,
    bodyHtml: content.bodyHtml,
    receivedOn: at,
    mailFrom: schedule.lead.contact.email,
    subject: replySubject(schedule.sequence.subject),
    classification,
  };
  (schedule.replies ??= []).push(reply);
  insertByTime(schedule.lead.campaign.replies, reply, (record) => record.receivedOn);
  schedule.lead.campaign.workspace.totalRepliesReceived++;
  return reply;
}
