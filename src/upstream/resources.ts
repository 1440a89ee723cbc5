import { z } from "zod";
import {
  billingPeriod,
  campaignStatus,
  dayName,
  emailContentType,
  replyClassification,
  schedulingStrategy,
  sequenceLabel,
  unsubLinkType,
} from "./enums.ts";
import { parseInstant } from "./instant.ts";
import { integerColumn, integerOfText } from "./tolerant.ts";

/**
 * Records as the upstream returns them (spec section 2). These schemas are the
 * single source of truth: the emulator serves exactly these shapes and the
 * client reads every record against them (tolerantly: see tolerant.ts).
 * Objects are loose so that fields the upstream adds later are kept, not
 * dropped.
 *
 * Date-times are ISO 8601 in UTC (`Z`), as the spec says; other forms are read
 * by tolerant reading as a deviation. Date-times that record an event which
 * may not have happened yet (`sent_on`, `email_opened_on`,
 * `deletion_started_on`) are read as nullable: the upstream sends null until
 * the event occurs.
 */

const INT32_MAX = 2_147_483_647;
const INT32_MIN = -2_147_483_648;

/**
 * The format alone passes values that name no instant the warehouse holds (year 0000, a fraction that rounds past
 * 9999-12-31): each must be read as a deviation, named and not stored, rather than reach a row as a silent NULL
 * (or a NOT NULL key, failing its page). The format takes only `Z`, so a value of at most six fraction digits
 * (27 characters) outside year 0000 is one: every record carries several, and most need no second parse. A longer
 * fraction is one only when its digits past the sixth are zeros: others are rounded, which the tolerant read names.
 */
const MICROSECOND_PRECISE = /\.\d{6}0*Z$/;

export const dateTime = z.iso
  .datetime()
  .refine((text) => (text.length <= 27 ? !text.startsWith("0000") : MICROSECOND_PRECISE.test(text) && parseInstant(text) !== null), "names no instant of years 1 to 9999 to the microsecond");
/** An integer stored in a 4-byte column, so a value beyond it is read as a deviation, not sent to fail its page. */
const inInteger = (schema: z.ZodNumber) => schema.register(integerColumn, { column: "integer" });
const int32 = inInteger(z.number().int().min(INT32_MIN).max(INT32_MAX));
const nonNegativeInt32 = inInteger(z.number().int().min(0).max(INT32_MAX));
const timeOfDay = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d:[0-5]\d$/, "must be HH:MM:SS on a 24-hour clock");

export const workspace = z.looseObject({
  // Documented as int32, stored as a bigint as every id is: a larger id is kept, and named.
  id: z.number().int().min(INT32_MIN).max(INT32_MAX).register(integerColumn, { column: "bigint" }),
  created_on: dateTime,
  subscription_plan: z.string(),
  name: z.string().max(300),
  credits_remaining: int32,
  next_renewal_date: dateTime,
  billing_period: billingPeriod,
  time_zone: z.string().max(100),
  total_emails_sent: nonNegativeInt32,
  total_replies_received: nonNegativeInt32,
});
export type Workspace = z.infer<typeof workspace>;

export const domain = z.looseObject({
  id: z.number().int(),
  workspace_id: z.number().int(),
  domain: z.string(),
  status: z.string(),
  created_on: dateTime,
  deletion_started_on: dateTime.nullable(),
  setup_complete: z.boolean(),
  naming_strategy: z.string(),
  custom_name: z.string(),
  // Integers of no documented range, stored in 4-byte columns: a larger value is read as a deviation, not sent to fail its page.
  warmup_days_remaining: int32,
  redirect_subdomains_to: z.string(),
  warmup_active_days: int32,
});
export type Domain = z.infer<typeof domain>;

export const contactList = z.looseObject({
  uid: z.string().max(255),
  workspace_id: z.number().int(),
  name: z.string(),
  created_on: dateTime,
  status: z.string(),
  source: z.string(),
  available_columns: z.unknown(),
  has_unsubscribe_column: z.boolean(),
  unsubscribe_column_name: z.string(),
});
export type ContactList = z.infer<typeof contactList>;

export const campaignSettings = z.looseObject({
  name: z.string().max(300),
  reply_to_address: z.string().max(254).nullable(),
  daily_email_limit: nonNegativeInt32,
  skip_days: z.array(dayName).max(6),
  single_subject: z.boolean(),
  scheduling_strategy: schedulingStrategy,
  from_time: timeOfDay.nullable(),
  to_time: timeOfDay.nullable(),
  time_zone: z.string().max(100).nullable(),
  add_unsub_link: z.boolean(),
  /** A string of at most 100 characters whose values are auto and custom (spec 2.3, 4.3); the warehouse constrains it. */
  unsub_link_type: unsubLinkType,
  custom_unsub_text: z.string(),
  click_tracking_enabled: z.boolean(),
  open_tracking_enabled: z.boolean(),
  skip_dangerous_emails: z.boolean(),
  skip_disposable_emails: z.boolean(),
  skip_catchall_emails: z.boolean(),
  skip_full_inbox_emails: z.boolean(),
  skip_invalid_emails: z.boolean(),
  forward_negative_emails: z.boolean(),
  forward_netural_emails: z.boolean(),
  sending_domains: z.array(z.number().int()),
});
export type CampaignSettings = z.infer<typeof campaignSettings>;

/** Items of `selected_contact_lists`: their fields are not shown, so they stay opaque JSON. */
export const selectedContactList = z.record(z.string(), z.unknown());

export const campaign = z.looseObject({
  uid: z.string().max(255),
  created_on: dateTime,
  workspace_id: z.number().int().nullable(),
  scheduled_start_datetime: dateTime.nullable(),
  settings: campaignSettings,
  status: campaignStatus,
  bounces: nonNegativeInt32,
  campaign_paused: z.boolean(),
  campaign_paused_on: dateTime.nullable(),
  is_generating_schedules: z.boolean(),
  is_deleting_schedules: z.boolean(),
  archived: z.boolean(),
  is_campaign_bounce_blocked: z.boolean(),
  started_running_at: dateTime.nullable(),
  completed_at: dateTime.nullable(),
  cancelled_at: dateTime.nullable(),
  selected_contact_lists: z.array(selectedContactList),
});
export type Campaign = z.infer<typeof campaign>;

export const campaignListItem = z.looseObject({
  uid: z.string().max(255),
  name: z.string().max(300),
  workspace_id: z.number().int(),
  created_on: dateTime,
  status: campaignStatus,
});
export type CampaignListItem = z.infer<typeof campaignListItem>;

export const emailSequence = z.looseObject({
  id: z.number().int(),
  subject: z.string(),
  body: z.string(),
  order: int32,
  next_message_days: inInteger(z.number().int().min(0).max(32_767)),
  score: nonNegativeInt32,
  verdict: z.string(),
  suggestions: z.unknown(),
  label: sequenceLabel,
  blocked_reason: z.string(),
  is_flagged_for_approval: z.boolean(),
  block_approval: z.boolean(),
  email_content_type: emailContentType,
});
export type EmailSequence = z.infer<typeof emailSequence>;

export const nestedLinkClick = z.looseObject({
  id: z.number().int(),
  link: z.string(),
  clicked_on: dateTime,
});
export type NestedLinkClick = z.infer<typeof nestedLinkClick>;

export const nestedReply = z.looseObject({
  id: z.number().int(),
  body_plain_text: z.string(),
  body_html: z.string(),
  received_on: dateTime,
  reply_classification: replyClassification,
});
export type NestedReply = z.infer<typeof nestedReply>;

export const scheduleEmailData = z.looseObject({
  id: z.number().int(),
  subject: z.string(),
  body: z.string(),
  email_content_type: emailContentType,
});

export const schedule = z.looseObject({
  id: z.number().int(),
  email_data: scheduleEmailData,
  link_click_events: z.array(nestedLinkClick),
  replies: z.array(nestedReply),
  status: z.string(),
  schedule_datetime: dateTime,
  sent_on: dateTime.nullable(),
  reply_received: z.boolean(),
  email_opened: z.boolean(),
  email_opened_on: dateTime.nullable(),
  /** Its column holds 4 bytes, so its range ends there too. */
  email_open_count: nonNegativeInt32,
});
export type Schedule = z.infer<typeof schedule>;

export const contact = z.looseObject({
  id: z.number().int(),
  email_id: z.string(),
  bounced: z.boolean(),
  unsubscribed: z.boolean(),
});
export type Contact = z.infer<typeof contact>;

export const lead = z.looseObject({
  uid: z.string().max(255),
  contact,
  schedules: z.array(schedule),
  sender_email_address: z.string(),
  sender_name: z.string(),
});
export type Lead = z.infer<typeof lead>;

export const reply = z.looseObject({
  id: z.number().int(),
  schedule_id: z.number().int(),
  body_plain_text: z.string(),
  body_html: z.string(),
  received_on: dateTime,
  mail_from: z.string(),
  subject: z.string().max(500),
  reply_classification: replyClassification,
});
export type Reply = z.infer<typeof reply>;

export const linkClickEvent = z.looseObject({
  schedule_id: z.number().int(),
  link: z.string(),
  clicked_on: dateTime,
});
export type LinkClickEvent = z.infer<typeof linkClickEvent>;

export const emailOpenEvent = z.looseObject({
  schedule_id: z.number().int(),
  opened_on: dateTime,
});
export type EmailOpenEvent = z.infer<typeof emailOpenEvent>;

export const messageBody = z.looseObject({ message: z.string() });
export type MessageBody = z.infer<typeof messageBody>;

/**
 * A listing's total, kept in a 4-byte column (sync_checkpoints.upstream_total): one beyond it is unusable, as a
 * negative one is, rather than sent to fail its page's transaction with the page's records.
 */
const listingTotal = nonNegativeInt32;

/**
 * The `{data, total}` envelope of paginated listings; records stay raw so each
 * is read alone. A total sent as a numeric string is read as the integer it
 * names, as an integer field's is ("42", "42.0", "4.2e1").
 */
export const pageEnvelope = z.looseObject({
  data: z.array(z.unknown()),
  total: z.union([listingTotal, z.string().transform(integerOfText).pipe(listingTotal)]),
});

/** An envelope whose `total` is missing or unusable: its records are still read (the walk then cannot prove it saw them all). */
export const pageData = z.looseObject({ data: z.array(z.unknown()) });
