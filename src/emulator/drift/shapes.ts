import { PATHS } from "../../upstream/endpoints.ts";
import { hashText } from "../random.ts";
import type { JsonObject, Shape } from "./fields.ts";

/**
 * The API's record shapes (spec section 2, src/upstream/resources.ts) as far
 * as drift cares: each field's kind of value, which fields are keys (natural
 * and parent keys), and which hold child records.
 */

function numberOf(record: JsonObject, field: string): number {
  return Number(record[field]) | 0;
}

const byId = (record: JsonObject) => numberOf(record, "id");
const byUid = (record: JsonObject) => hashText(String(record.uid));
const byFields =
  (...fields: string[]) =>
  (record: JsonObject) =>
    hashText(fields.map((field) => String(record[field])).join("|"));

const KEY_INT = { type: "int", key: true } as const;
const KEY_TEXT = { type: "text", key: true } as const;
const KEY_DATETIME = { type: "datetime", key: true } as const;
const INT = { type: "int" } as const;
const BOOL = { type: "bool" } as const;
const DATETIME = { type: "datetime" } as const;
const TEXT = { type: "text" } as const;
const ENUM = { type: "enum" } as const;
const JSON_VALUE = { type: "json" } as const;

const WORKSPACE: Shape = {
  name: "workspace",
  entity: "workspace",
  identity: byId,
  fields: {
    id: KEY_INT,
    created_on: DATETIME,
    subscription_plan: ENUM,
    name: TEXT,
    credits_remaining: INT,
    next_renewal_date: DATETIME,
    billing_period: ENUM,
    time_zone: TEXT,
    total_emails_sent: INT,
    total_replies_received: INT,
  },
};

const DOMAIN: Shape = {
  name: "domain",
  entity: "domain",
  identity: byId,
  fields: {
    id: KEY_INT,
    workspace_id: KEY_INT,
    domain: TEXT,
    status: ENUM,
    created_on: DATETIME,
    deletion_started_on: DATETIME,
    setup_complete: BOOL,
    naming_strategy: ENUM,
    custom_name: TEXT,
    warmup_days_remaining: INT,
    redirect_subdomains_to: TEXT,
    warmup_active_days: INT,
  },
};

const CONTACT_LIST: Shape = {
  name: "contact-list",
  entity: "contact-list",
  identity: byUid,
  fields: {
    uid: KEY_TEXT,
    workspace_id: KEY_INT,
    name: TEXT,
    created_on: DATETIME,
    status: ENUM,
    source: ENUM,
    available_columns: JSON_VALUE,
    has_unsubscribe_column: BOOL,
    unsubscribe_column_name: TEXT,
  },
};

const CAMPAIGN_LIST_ITEM: Shape = {
  name: "campaign-list-item",
  entity: "campaign",
  identity: byUid,
  fields: { uid: KEY_TEXT, name: TEXT, workspace_id: KEY_INT, created_on: DATETIME, status: ENUM },
};

const CAMPAIGN_SETTINGS: Shape = {
  name: "campaign-settings",
  entity: "campaign-settings",
  identity: (_record, parent) => parent,
  fields: {
    name: TEXT,
    reply_to_address: TEXT,
    daily_email_limit: INT,
    skip_days: JSON_VALUE,
    single_subject: BOOL,
    scheduling_strategy: ENUM,
    from_time: TEXT,
    to_time: TEXT,
    time_zone: TEXT,
    add_unsub_link: BOOL,
    unsub_link_type: ENUM,
    custom_unsub_text: TEXT,
    click_tracking_enabled: BOOL,
    open_tracking_enabled: BOOL,
    skip_dangerous_emails: BOOL,
    skip_disposable_emails: BOOL,
    skip_catchall_emails: BOOL,
    skip_full_inbox_emails: BOOL,
    skip_invalid_emails: BOOL,
    forward_negative_emails: BOOL,
    forward_netural_emails: BOOL,
    // The keys of campaign_sending_domains: left alone.
    sending_domains: { type: "json", key: true },
  },
};

export const CAMPAIGN: Shape = {
  name: "campaign",
  entity: "campaign",
  identity: byUid,
  fields: {
    uid: KEY_TEXT,
    created_on: DATETIME,
    workspace_id: KEY_INT,
    scheduled_start_datetime: DATETIME,
    settings: { type: "object", shape: CAMPAIGN_SETTINGS },
    status: ENUM,
    bounces: INT,
    campaign_paused: BOOL,
    campaign_paused_on: DATETIME,
    is_generating_schedules: BOOL,
    is_deleting_schedules: BOOL,
    archived: BOOL,
    is_campaign_bounce_blocked: BOOL,
    started_running_at: DATETIME,
    completed_at: DATETIME,
    cancelled_at: DATETIME,
    selected_contact_lists: JSON_VALUE,
  },
};

const SEQUENCE: Shape = {
  name: "sequence",
  entity: "sequence",
  identity: byId,
  fields: {
    id: KEY_INT,
    subject: TEXT,
    body: TEXT,
    order: INT,
    next_message_days: INT,
    score: INT,
    verdict: ENUM,
    suggestions: JSON_VALUE,
    label: ENUM,
    blocked_reason: TEXT,
    is_flagged_for_approval: BOOL,
    block_approval: BOOL,
    email_content_type: ENUM,
  },
};

const EMAIL_DATA: Shape = {
  name: "email-data",
  entity: "sequence",
  identity: byId,
  fields: { id: KEY_INT, subject: TEXT, body: TEXT, email_content_type: ENUM },
};

/** A nested click's id is its key, and (schedule_id, link, clicked_on) the key it merges on with the listing's. */
const NESTED_CLICK: Shape = {
  name: "nested-click",
  entity: "click",
  identity: byId,
  fields: { id: KEY_INT, link: KEY_TEXT, clicked_on: KEY_DATETIME },
};

const NESTED_REPLY: Shape = {
  name: "nested-reply",
  entity: "reply",
  identity: byId,
  fields: { id: KEY_INT, body_plain_text: TEXT, body_html: TEXT, received_on: DATETIME, reply_classification: ENUM },
};

const SCHEDULE: Shape = {
  name: "schedule",
  entity: "schedule",
  identity: byId,
  fields: {
    id: KEY_INT,
    email_data: { type: "object", shape: EMAIL_DATA },
    link_click_events: { type: "array", shape: NESTED_CLICK },
    replies: { type: "array", shape: NESTED_REPLY },
    status: ENUM,
    schedule_datetime: DATETIME,
    sent_on: DATETIME,
    reply_received: BOOL,
    email_opened: BOOL,
    email_opened_on: DATETIME,
    email_open_count: INT,
  },
};

const CONTACT: Shape = {
  name: "contact",
  entity: "contact",
  identity: byId,
  fields: { id: KEY_INT, email_id: TEXT, bounced: BOOL, unsubscribed: BOOL },
};

const LEAD: Shape = {
  name: "lead",
  entity: "lead",
  identity: byUid,
  fields: {
    uid: KEY_TEXT,
    contact: { type: "object", shape: CONTACT },
    schedules: { type: "array", shape: SCHEDULE },
    sender_email_address: TEXT,
    sender_name: TEXT,
  },
};

const REPLY: Shape = {
  name: "reply",
  entity: "reply",
  identity: byId,
  fields: {
    id: KEY_INT,
    schedule_id: KEY_INT,
    body_plain_text: TEXT,
    body_html: TEXT,
    received_on: DATETIME,
    mail_from: TEXT,
    subject: TEXT,
    reply_classification: ENUM,
  },
};

const CLICK_EVENT: Shape = {
  name: "click-event",
  entity: "click-event",
  identity: byFields("schedule_id", "link", "clicked_on"),
  fields: { schedule_id: KEY_INT, link: KEY_TEXT, clicked_on: KEY_DATETIME },
};

const OPEN_EVENT: Shape = {
  name: "open-event",
  entity: "open-event",
  identity: byFields("schedule_id", "opened_on"),
  fields: { schedule_id: KEY_INT, opened_on: KEY_DATETIME },
};

/** The shape of the records each endpoint serves (the same for a path's GET and its writes). */
export const ENDPOINT_SHAPES: Readonly<Record<string, Shape>> = {
  [PATHS.workspaces]: WORKSPACE,
  [PATHS.domains]: DOMAIN,
  [PATHS.contacts]: CONTACT_LIST,
  [PATHS.campaigns]: CAMPAIGN_LIST_ITEM,
  [PATHS.campaign]: CAMPAIGN,
  [PATHS.emailSequence]: SEQUENCE,
  [PATHS.leads]: LEAD,
  [PATHS.lead]: LEAD,
  [PATHS.replies]: REPLY,
  [PATHS.linkClickEvents]: CLICK_EVENT,
  [PATHS.emailOpenEvents]: OPEN_EVENT,
};
