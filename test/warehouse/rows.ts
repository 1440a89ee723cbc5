import type { RowInput } from "../../src/warehouse/tables.ts";

/** Realistic warehouse rows for tests, as the sync's row mappings produce them. */

export const ACCOUNT = "acme";

export function workspaceRow(id: number, changes: Partial<RowInput<"workspaces">> = {}): RowInput<"workspaces"> {
  return {
    id,
    _account: ACCOUNT,
    created_on: new Date("2024-01-02T09:00:00Z"),
    subscription_plan: "growth",
    name: `Workspace ${id}`,
    credits_remaining: 5_000,
    next_renewal_date: new Date("2024-06-01T00:00:00Z"),
    billing_period: "monthly",
    time_zone: "Europe/Berlin",
    total_emails_sent: 1_200,
    total_replies_received: 40,
    _extra: null,
    ...changes,
  };
}

export function domainRow(id: number, changes: Partial<RowInput<"domains">> = {}): RowInput<"domains"> {
  return {
    id,
    _account: ACCOUNT,
    workspace_id: 1,
    domain: `mail${id}.example.com`,
    status: "creating",
    created_on: new Date("2024-01-03T10:00:00Z"),
    deletion_started_on: null,
    setup_complete: false,
    naming_strategy: "random",
    custom_name: "",
    warmup_days_remaining: 14,
    redirect_subdomains_to: "example.com",
    warmup_active_days: 0,
    _extra: null,
    ...changes,
  };
}

/** What the campaign listing (#1) knows. */
export function campaignListingRow(uid: string, changes: Partial<RowInput<"campaigns">> = {}): RowInput<"campaigns"> {
  return {
    uid,
    _account: ACCOUNT,
    name: `Campaign ${uid}`,
    workspace_id: 1,
    created_on: new Date("2024-02-01T08:00:00Z"),
    status: "running",
    _observed_at: new Date("2024-02-03T08:00:00Z"),
    ...changes,
  };
}

/** What the campaign retrieve (#2) knows: everything, settings flattened, observed as a detail read too. */
export function campaignDetailRow(uid: string, changes: Partial<RowInput<"campaigns">> = {}): RowInput<"campaigns"> {
  const observedAt = changes._observed_at ?? campaignListingRow(uid)._observed_at;
  return {
    ...campaignListingRow(uid),
    _detail_observed_at: observedAt,
    scheduled_start_datetime: new Date("2024-02-02T08:00:00Z"),
    bounces: 3,
    campaign_paused: false,
    campaign_paused_on: null,
    is_generating_schedules: false,
    is_deleting_schedules: false,
    archived: false,
    is_campaign_bounce_blocked: false,
    started_running_at: new Date("2024-02-02T08:00:00Z"),
    completed_at: null,
    cancelled_at: null,
    selected_contact_lists: [{ uid: "list-1", name: "Founders" }],
    reply_to_address: "replies@example.com",
    daily_email_limit: 50,
    skip_days: ["Saturday", "Sunday"],
    single_subject: false,
    scheduling_strategy: "sequential",
    from_time: "09:00:00",
    to_time: "17:00:00",
    time_zone: "Europe/Berlin",
    add_unsub_link: true,
    unsub_link_type: "auto",
    custom_unsub_text: "",
    click_tracking_enabled: true,
    open_tracking_enabled: true,
    skip_dangerous_emails: true,
    skip_disposable_emails: true,
    skip_catchall_emails: false,
    skip_full_inbox_emails: true,
    skip_invalid_emails: true,
    forward_negative_emails: false,
    forward_netural_emails: true,
    _extra: null,
    ...changes,
  };
}

export function emailSequenceRow(id: number, campaignUid: string, changes: Partial<RowInput<"email_sequences">> = {}): RowInput<"email_sequences"> {
  return {
    id,
    campaign_uid: campaignUid,
    subject: `Step ${id}`,
    body: "Hi {{first_name}}, quick question.",
    order: id,
    next_message_days: 3,
    score: 87,
    verdict: "good",
    suggestions: [],
    label: "passed",
    blocked_reason: "",
    is_flagged_for_approval: false,
    block_approval: false,
    email_content_type: "text/plain",
    _extra: null,
    ...changes,
  };
}

export function leadRow(uid: string, campaignUid: string, contactId: number): RowInput<"leads"> {
  return { uid, campaign_uid: campaignUid, contact_id: contactId, sender_email_address: "ana@example.com", sender_name: "Ana", _extra: null };
}

export function contactRow(id: number, changes: Partial<RowInput<"contacts">> = {}): RowInput<"contacts"> {
  return { id, email_id: `lead${id}@prospect.example`, bounced: false, unsubscribed: false, _extra: null, ...changes };
}

export function scheduleRow(
  id: number,
  lead: { uid: string; campaign_uid: string },
  emailSequenceId: number,
  changes: Partial<RowInput<"schedules">> = {},
): RowInput<"schedules"> {
  return {
    id,
    lead_uid: lead.uid,
    campaign_uid: lead.campaign_uid,
    email_sequence_id: emailSequenceId,
    status: "created",
    schedule_datetime: new Date("2024-03-01T09:00:00Z"),
    sent_on: null,
    reply_received: false,
    email_opened: false,
    email_opened_on: null,
    email_open_count: 0,
    _extra: null,
    ...changes,
  };
}

/** A reply as the campaign's reply listing (#13) gives it. */
export function listedReplyRow(id: number, campaignUid: string, scheduleId: number, changes: Partial<RowInput<"replies">> = {}): RowInput<"replies"> {
  return {
    id,
    campaign_uid: campaignUid,
    schedule_id: scheduleId,
    body_plain_text: "Sounds good, let's talk.",
    body_html: "<p>Sounds good, let's talk.</p>",
    received_on: new Date("2024-03-02T10:00:00Z"),
    mail_from: "lead@prospect.example",
    subject: "Re: quick question",
    reply_classification: "positive",
    ...changes,
  };
}
