import type {
  Campaign,
  CampaignListItem,
  ContactList,
  Domain,
  EmailOpenEvent,
  EmailSequence,
  Lead,
  LinkClickEvent,
  NestedLinkClick,
  NestedReply,
  Reply,
  Schedule,
  Workspace,
} from "../../upstream/resources.ts";
import type {
  CampaignRecord,
  ClickRecord,
  ContactListRecord,
  DomainRecord,
  LeadRecord,
  OpenRecord,
  ReplyRecord,
  ScheduleRecord,
  SequenceRecord,
  WorkspaceRecord,
} from "./model.ts";
import type { World } from "./world.ts";

/** Records in the exact shapes of the upstream API (spec section 2), built one page at a time. */

export function iso(time: number): string {
  return new Date(time).toISOString();
}

function isoOrNull(time: number | null): string | null {
  return time === null ? null : iso(time);
}

/** An event time: three fraction digits, or six when the event was recorded to the microsecond. */
export function eventIso(time: number, micros: number | undefined): string {
  const text = iso(time);
  return micros === undefined ? text : `${text.slice(0, -1)}${String(micros).padStart(3, "0")}Z`;
}

export function renderWorkspace(workspace: WorkspaceRecord): Workspace {
  return {
    id: workspace.id,
    created_on: iso(workspace.createdOn),
    subscription_plan: workspace.subscriptionPlan,
    name: workspace.name,
    credits_remaining: workspace.creditsRemaining,
    next_renewal_date: iso(workspace.nextRenewalDate),
    billing_period: workspace.billingPeriod,
    time_zone: workspace.timeZone,
    total_emails_sent: workspace.totalEmailsSent,
    total_replies_received: workspace.totalRepliesReceived,
  };
}

export function renderDomain(domain: DomainRecord): Domain {
  return {
    id: domain.id,
    workspace_id: domain.workspace.id,
    domain: domain.domain,
    status: domain.status,
    created_on: iso(domain.createdOn),
    deletion_started_on: isoOrNull(domain.deletionStartedOn),
    setup_complete: domain.setupComplete,
    naming_strategy: domain.namingStrategy,
    custom_name: domain.customName,
    warmup_days_remaining: domain.warmupDaysRemaining,
    redirect_subdomains_to: domain.redirectSubdomainsTo,
    warmup_active_days: domain.warmupActiveDays,
  };
}

export function renderContactList(list: ContactListRecord): ContactList {
  return {
    uid: list.uid,
    workspace_id: list.workspace.id,
    name: list.name,
    created_on: iso(list.createdOn),
    status: list.status,
    source: list.source,
    available_columns: list.availableColumns,
    has_unsubscribe_column: list.hasUnsubscribeColumn,
    unsubscribe_column_name: list.unsubscribeColumnName,
  };
}

export function renderCampaignListItem(campaign: CampaignRecord): CampaignListItem {
  return {
    uid: campaign.uid,
    name: campaign.settings.name,
    workspace_id: campaign.workspace.id,
    created_on: iso(campaign.createdOn),
    status: campaign.status,
  };
}

export function renderCampaign(campaign: CampaignRecord): Campaign {
  return {
    uid: campaign.uid,
    created_on: iso(campaign.createdOn),
    workspace_id: campaign.workspace.id,
    scheduled_start_datetime: isoOrNull(campaign.scheduledStart),
    settings: campaign.settings,
    status: campaign.status,
    bounces: campaign.bounces,
    campaign_paused: campaign.paused,
    campaign_paused_on: isoOrNull(campaign.pausedOn),
    is_generating_schedules: campaign.generatingSchedules,
    is_deleting_schedules: campaign.deletingSchedules,
    archived: campaign.archived,
    is_campaign_bounce_blocked: campaign.bounceBlocked,
    started_running_at: isoOrNull(campaign.startedRunningAt),
    completed_at: isoOrNull(campaign.completedAt),
    cancelled_at: isoOrNull(campaign.cancelledAt),
    selected_contact_lists: campaign.contactLists.map((list) => ({ uid: list.uid, name: list.name })),
  };
}

export function renderSequence(sequence: SequenceRecord): EmailSequence {
  return {
    id: sequence.id,
    subject: sequence.subject,
    body: sequence.body,
    order: sequence.order,
    next_message_days: sequence.nextMessageDays,
    score: sequence.score,
    verdict: sequence.verdict,
    suggestions: sequence.suggestions,
    label: sequence.label,
    blocked_reason: sequence.blockedReason,
    is_flagged_for_approval: sequence.flaggedForApproval,
    block_approval: sequence.blockApproval,
    email_content_type: sequence.contentType,
  };
}

function renderNestedClick(click: ClickRecord): NestedLinkClick {
  return { id: click.id, link: click.link, clicked_on: eventIso(click.clickedOn, click.micros) };
}

function renderNestedReply(reply: ReplyRecord): NestedReply {
  return {
    id: reply.id,
    body_plain_text: reply.bodyPlainText,
    body_html: reply.bodyHtml,
    received_on: iso(reply.receivedOn),
    reply_classification: reply.classification,
  };
}

function renderSchedule(schedule: ScheduleRecord): Schedule {
  const sequence = schedule.sequence;
  return {
    id: schedule.id,
    // The body is the sequence's own string, shared, never copied per schedule.
    email_data: { id: sequence.id, subject: sequence.subject, body: sequence.body, email_content_type: sequence.contentType },
    link_click_events: (schedule.clicks ?? []).map(renderNestedClick),
    replies: (schedule.replies ?? []).map(renderNestedReply),
    status: schedule.status,
    schedule_datetime: iso(schedule.at),
    sent_on: isoOrNull(schedule.sentOn),
    reply_received: (schedule.replies?.length ?? 0) > 0,
    email_opened: schedule.openCount > 0,
    email_opened_on: schedule.firstOpenedOn === null ? null : eventIso(schedule.firstOpenedOn, schedule.firstOpenedMicros),
    email_open_count: schedule.openCount,
  };
}

export function renderLead(world: World, lead: LeadRecord): Lead {
  const contact = lead.contact;
  return {
    uid: world.leadUid(lead),
    contact: { id: contact.id, email_id: contact.email, bounced: contact.bounced, unsubscribed: contact.unsubscribed },
    schedules: lead.schedules.map(renderSchedule),
    sender_email_address: lead.sender.email,
    sender_name: lead.sender.name,
  };
}

export function renderReply(reply: ReplyRecord): Reply {
  return { ...renderNestedReply(reply), schedule_id: reply.schedule.id, mail_from: reply.mailFrom, subject: reply.subject };
}

export function renderClickEvent(click: ClickRecord): LinkClickEvent {
  return { schedule_id: click.schedule.id, link: click.link, clicked_on: eventIso(click.clickedOn, click.micros) };
}

export function renderOpenEvent(open: OpenRecord): EmailOpenEvent {
  return { schedule_id: open.schedule.id, opened_on: eventIso(open.openedOn, open.micros) };
}
