import type { ReadRecord, RecordOf, UpstreamClient } from "../../upstream/client.ts";
import { isUsableKey, unplaceableKey } from "../../upstream/parsing.ts";
import { contact, lead, nestedLinkClick, nestedReply, schedule, scheduleEmailData } from "../../upstream/resources.ts";
import { issuesAt, objectAsRead, recordList, type FieldIssue } from "../../upstream/tolerant.ts";
import { CONFIRMATIONS_PER_WALK } from "../confirm-missing.ts";
import { compositeKey, instant, unknownFields, withoutUnreadable } from "../mapping.ts";
import type { CascadeRule, LookupStream, PagedStream, RowBatch, RowContext, SoftDeleteRule } from "../stream.ts";
import type { SyncedTableName } from "../../warehouse/tables.ts";

type Lead = RecordOf<"leads">;
type Schedule = NonNullable<NonNullable<Lead["schedules"]>[number]>;
type LeadTables = "contacts" | "leads" | "schedules" | "email_sequences" | "replies" | "link_clicks";
type Rows = { [T in LeadTables]-?: NonNullable<RowBatch[T]> };

/** Natural key of a click, shared by the listing and the copies nested in schedules. */
export function linkClickKey(scheduleId: number, link: string, clickedOn: string): string {
  return compositeKey(scheduleId, link, instant(clickedOn));
}

function reasonAt(issues: readonly FieldIssue[], path: string): string {
  const found = issues.filter((issue) => issue.path === path || issue.path.startsWith(`${path}.`));
  return found.map((issue) => `${issue.path}: ${issue.reason}`).join("; ") || `${path}: empty`;
}

/**
 * The value at `path` in the record as it arrived, each level read as the tolerant reader read it. A number is a
 * position in a list (recordList: one record sent where a list is documented is a list of one, an object keyed by
 * index or the JSON text of a list is that list); a name is a field of an object (objectAsRead: a one-item list
 * sent where an object is documented is that object).
 */
function rawAt(raw: unknown, ...path: (string | number)[]): unknown {
  let value = raw;
  for (const step of path) value = typeof step === "number" ? recordList(value)?.items[step] : (objectAsRead(value) as Record<string, unknown> | null | undefined)?.[step];
  return value ?? null;
}

/** The items of a list of records as it arrived, read as the tolerant reader reads them (recordList); none for anything else. */
function itemsOf(list: unknown): unknown[] {
  return recordList(list)?.items ?? [];
}

/**
 * A campaign's leads (#11) with everything nested in them: the contact, one
 * schedule per email, the email sequence each schedule sends (its id, subject,
 * body and content type), and the clicks and replies recorded on schedules.
 *
 * The contact and a schedule's `email_data` are copies of records other leads
 * and schedules share, so what deviates in them is recorded on the row that
 * carries the copy (`contact.email_id` on the lead, `email_data.subject` on the
 * schedule), and their own rows take only the fields that could be read.
 */
export function leadRows(read: ReadRecord<Lead>, context: RowContext): RowBatch {
  const { value: record, issues, raw } = read;
  const campaignUid = context.scope.campaignUid ?? "";
  const rows: Rows = { contacts: [], leads: [], schedules: [], email_sequences: [], replies: [], link_clicks: [] };
  const copy = record.contact;
  const contactId = copy !== null && isUsableKey(copy.id) ? (copy.id as number) : null;
  const rawContact = rawAt(raw, "contact");
  if (contactId === null && rawContact !== null) {
    // Contacts arrive only inside leads: one whose id cannot be read would otherwise be lost.
    context.reject({ reason: reasonAt(issues, copy === null ? "contact" : "contact.id"), payload: rawContact, recordKey: null, skipped: 0 });
  }
  if (copy !== null && contactId !== null) {
    rows.contacts.push(
      withoutUnreadable(
        {
          id: contactId,
          email_id: copy.email_id,
          bounced: copy.bounced,
          unsubscribed: copy.unsubscribed,
          _extra: unknownFields(copy, contact),
          _observed_at: context.observedAt,
        },
        issues,
        "contact",
      ),
    );
  }
  rows.leads.push(
    withoutUnreadable(
      {
        uid: record.uid,
        campaign_uid: campaignUid,
        contact_id: contactId,
        sender_email_address: record.sender_email_address,
        sender_name: record.sender_name,
        _extra: unknownFields(record, lead),
        _field_issues: issuesAt(issues, "", ["schedules"]),
        _observed_at: context.observedAt,
      },
      issues,
      "",
      (column) => (column === "contact_id" ? "contact.id" : column),
    ),
  );
  (record.schedules ?? []).forEach((item, index) => {
    const at = `schedules.${index}`;
    if (item === null || !isUsableKey(item.id)) {
      const skipped = (item?.replies?.length ?? 0) + (item?.link_click_events?.length ?? 0);
      context.reject({ reason: reasonAt(issues, item === null ? at : `${at}.id`), payload: rawAt(raw, "schedules", index), recordKey: null, skipped });
      return;
    }
    scheduleRows(item, index, record.uid, campaignUid, read, context, rows);
  });
  return rows;
}

function scheduleRows(item: Schedule, position: number, leadUid: string, campaignUid: string, read: ReadRecord<Lead>, context: RowContext, rows: Rows): void {
  const { issues, raw } = read;
  const at = `schedules.${position}`;
  const scheduleId = item.id as number;
  const emailData = item.email_data;
  const sequenceId = emailData !== null && isUsableKey(emailData.id) ? (emailData.id as number) : null;
  // Read from the record as it arrived only when needed: every schedule of every page passes here.
  const rawEmailData = sequenceId === null ? rawAt(raw, "schedules", position, "email_data") : null;
  if (rawEmailData !== null) {
    // As the contact: the sequence a schedule sends may be known nowhere else, so one whose id cannot be read is kept.
    const field = emailData === null ? `${at}.email_data` : `${at}.email_data.id`;
    context.reject({ reason: reasonAt(issues, field), payload: rawEmailData, recordKey: null, skipped: 0 });
  }
  rows.schedules.push(
    withoutUnreadable(
      {
        id: scheduleId,
        lead_uid: leadUid,
        campaign_uid: campaignUid,
        email_sequence_id: sequenceId,
        status: item.status,
        schedule_datetime: instant(item.schedule_datetime),
        sent_on: instant(item.sent_on),
        reply_received: item.reply_received,
        email_opened: item.email_opened,
        email_opened_on: instant(item.email_opened_on),
        email_open_count: item.email_open_count,
        _extra: unknownFields(item, schedule),
        _field_issues: issuesAt(issues, at, ["replies", "link_click_events"]),
        _observed_at: context.observedAt,
      },
      issues,
      at,
      (column) => (column === "email_sequence_id" ? "email_data.id" : column),
    ),
  );
  if (emailData !== null && sequenceId !== null) {
    rows.email_sequences.push(
      withoutUnreadable(
        {
          id: sequenceId,
          campaign_uid: campaignUid,
          subject: emailData.subject,
          body: emailData.body,
          email_content_type: emailData.email_content_type,
          _extra: unknownFields(emailData, scheduleEmailData),
        },
        issues,
        `${at}.email_data`,
      ),
    );
  }
  (item.replies ?? []).forEach((reply, index) => {
    const path = `${at}.replies.${index}`;
    if (reply === null || !isUsableKey(reply.id)) {
      context.reject({ reason: reasonAt(issues, reply === null ? path : `${path}.id`), payload: rawAt(raw, "schedules", position, "replies", index), recordKey: null, skipped: 0 });
      return;
    }
    rows.replies.push(
      withoutUnreadable(
        {
          id: reply.id as number,
          campaign_uid: campaignUid,
          schedule_id: scheduleId,
          lead_uid: leadUid,
          body_plain_text: reply.body_plain_text,
          body_html: reply.body_html,
          received_on: instant(reply.received_on),
          reply_classification: reply.reply_classification,
          _extra: unknownFields(reply, nestedReply),
          _field_issues: issuesAt(issues, path),
          _observed_at: context.observedAt,
        },
        issues,
        path,
      ),
    );
  });
  (item.link_click_events ?? []).forEach((click, index) => {
    const path = `${at}.link_click_events.${index}`;
    const clickedOn = click === null ? null : instant(click.clicked_on);
    // The link is part of the click's key: text that cannot be stored or indexed places it no more than a missing link.
    const linkProblem = click === null ? undefined : unplaceableKey(click.link, issues, `${path}.link`);
    if (click === null || !isUsableKey(click.link) || linkProblem !== undefined || clickedOn === null) {
      const field = click === null ? path : !isUsableKey(click.link) || linkProblem !== undefined ? `${path}.link` : `${path}.clicked_on`;
      const reason = linkProblem === undefined ? reasonAt(issues, field) : `${field}: ${linkProblem}`;
      context.reject({ reason, payload: rawAt(raw, "schedules", position, "link_click_events", index), recordKey: null, skipped: 0 });
      return;
    }
    rows.link_clicks.push(
      withoutUnreadable(
        {
          id: click.id,
          campaign_uid: campaignUid,
          schedule_id: scheduleId,
          link: click.link as string,
          clicked_on: clickedOn,
          _extra: unknownFields(click, nestedLinkClick),
          _field_issues: issuesAt(issues, path),
        },
        issues,
        path,
      ),
    );
  });
}

/** The ids of the schedules a lead vouches for, or null when its list of schedules could not be read whole. */
function scheduleKeysOf(record: Lead): { id: number }[] | null {
  const items = record.schedules;
  if (items === null || items.some((item) => item === null || !isUsableKey(item.id))) return null;
  return items.map((item) => ({ id: (item as Schedule).id as number }));
}

/** A schedule that is gone takes its replies, clicks and opens with it. */
const SCHEDULE_CHILDREN: CascadeRule = {
  from: "schedules",
  children: [
    { table: "replies", column: "schedule_id" },
    { table: "link_clicks", column: "schedule_id" },
    { table: "email_opens", column: "schedule_id" },
  ],
};

/**
 * Tables where a lead's rows are copies of records another stream decides the existence of: a schedule's replies
 * and clicks (the listings #13, #14) and the email sequence it sends (#9).
 */
const LEAD_COPIES: SyncedTableName[] = ["replies", "link_clicks", "email_sequences"];

/** A lead that is gone takes its schedules (and they their events, SCHEDULE_CHILDREN); its contact follows by itself (migrations/0008). */
const LEAD_CHILDREN: CascadeRule = { from: "leads", children: [{ table: "schedules", column: "lead_uid" }] };

const LEAD_SOFT_DELETES: SoftDeleteRule<Lead>[] = [
  { table: "leads", within: (scope) => ({ campaign_uid: scope.campaignUid ?? "" }), keys: (record) => [{ uid: record.uid }] },
  {
    table: "schedules",
    within: (scope) => ({ campaign_uid: scope.campaignUid ?? "" }),
    keys: scheduleKeysOf,
    parent: { column: "lead_uid", of: (record) => record.uid },
  },
];

/** What a lead's payload holds below it: its contact, schedules, and their replies and clicks. */
export function recordsBelowLead(payload: unknown): number {
  // Read as the tolerant reader reads it: a lead (or a schedule) sent as a one-item list is that object.
  const lead = objectAsRead(payload) as { contact?: unknown; schedules?: unknown } | null;
  const schedules = itemsOf(lead?.schedules).map(objectAsRead) as ({ replies?: unknown; link_click_events?: unknown } | null)[];
  const nested = (list: unknown) => itemsOf(list).length;
  return (lead?.contact ? 1 : 0) + schedules.reduce((sum, item) => sum + 1 + nested(item?.replies) + nested(item?.link_click_events), 0);
}

/** One lead by its uid (#12). A uid names one lead of one campaign (the warehouse keys leads by uid alone), and its answer does not say which: found means still in the campaign the row holds. */
const fetchLead = (client: UpstreamClient, uid: string | number, signal?: AbortSignal) => client.getLead(String(uid), signal);

export const leads: PagedStream<Lead> = {
  name: "leads",
  kind: "paged",
  scope: "campaign",
  resource: "leads",
  checkpoint: "rescan",
  key: (record) => record.uid,
  rows: leadRows,
  softDelete: LEAD_SOFT_DELETES,
  // A lead confirmed gone takes its schedules even when the walk could not judge them (kept for a failed lookup
  // on the walk before, or seen since by another read), and they their events.
  cascade: [LEAD_CHILDREN, SCHEDULE_CHILDREN],
  childrenOf: recordsBelowLead,
  copiesInto: LEAD_COPIES,
  completeness: { table: "leads", within: (scope) => ({ campaign_uid: scope.campaignUid ?? "" }) },
  // A lead moved behind the cursor while another went looks like a whole walk: each lead it did not see is asked for.
  confirmMissing: { table: "leads", fetch: fetchLead, lookupsPerWalk: CONFIRMATIONS_PER_WALK },
};

/**
 * The same leads, fetched one by one (#12): how the schedules of leads whose
 * events moved are refreshed without walking every lead. Its rows are the
 * same source as the listing's.
 */
export const LEAD_REFRESH = "lead_refresh";

export function leadsByUid(uids: readonly string[]): LookupStream<Lead> {
  return {
    name: LEAD_REFRESH,
    source: "leads",
    kind: "lookup",
    scope: "campaign",
    ids: async () => uids,
    // Only the leads whose events moved: one it does not name now is still the leads walk's, and may be due again.
    idsNameAll: false,
    fetch: fetchLead,
    missing: { table: "leads", column: "uid" },
    cascade: [LEAD_CHILDREN, SCHEDULE_CHILDREN],
    key: (record) => record.uid,
    rows: leadRows,
    childrenOf: recordsBelowLead,
    copiesInto: LEAD_COPIES,
  };
}
