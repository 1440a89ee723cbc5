import { contact, lead, schedule, type Lead } from "../../upstream/resources.ts";
import { compositeKey, isoKey, toDate, unknownFields } from "../mapping.ts";
import type { LookupStream, PagedStream, RowBatch, StreamScope } from "../stream.ts";

/**
 * A campaign's leads (#11) with everything nested in them: the contact, one
 * schedule per email, the email sequence each schedule sends (its id, subject,
 * body and content type), and the clicks and replies recorded on schedules.
 * Leads change in place as emails go out, so the listing is walked in full.
 */
export function leadRows(record: Lead, scope: StreamScope): RowBatch {
  const campaignUid = scope.campaignUid ?? "";
  const schedules = record.schedules;
  return {
    contacts: [
      {
        id: record.contact.id,
        email_id: record.contact.email_id,
        bounced: record.contact.bounced,
        unsubscribed: record.contact.unsubscribed,
        _extra: unknownFields(record.contact, contact),
      },
    ],
    leads: [
      {
        uid: record.uid,
        campaign_uid: campaignUid,
        contact_id: record.contact.id,
        sender_email_address: record.sender_email_address,
        sender_name: record.sender_name,
        _extra: unknownFields(record, lead),
      },
    ],
    schedules: schedules.map((item) => ({
      id: item.id,
      lead_uid: record.uid,
      campaign_uid: campaignUid,
      email_sequence_id: item.email_data.id,
      status: item.status,
      schedule_datetime: toDate(item.schedule_datetime),
      sent_on: toDate(item.sent_on),
      reply_received: item.reply_received,
      email_opened: item.email_opened,
      email_opened_on: toDate(item.email_opened_on),
      email_open_count: item.email_open_count,
      _extra: unknownFields(item, schedule),
    })),
    email_sequences: schedules.map((item) => ({
      id: item.email_data.id,
      campaign_uid: campaignUid,
      subject: item.email_data.subject,
      body: item.email_data.body,
      email_content_type: item.email_data.email_content_type,
    })),
    replies: schedules.flatMap((item) =>
      item.replies.map((reply) => ({
        id: reply.id,
        campaign_uid: campaignUid,
        schedule_id: item.id,
        lead_uid: record.uid,
        body_plain_text: reply.body_plain_text,
        body_html: reply.body_html,
        received_on: toDate(reply.received_on),
        reply_classification: reply.reply_classification,
      })),
    ),
    link_clicks: schedules.flatMap((item) =>
      item.link_click_events.map((click) => ({
        id: click.id,
        campaign_uid: campaignUid,
        schedule_id: item.id,
        link: click.link,
        clicked_on: toDate(click.clicked_on),
      })),
    ),
  };
}

export const leads: PagedStream<Lead> = {
  name: "leads",
  kind: "paged",
  scope: "campaign",
  resource: "leads",
  checkpoint: "rescan",
  key: (record) => record.uid,
  rows: leadRows,
  softDelete: [
    { table: "leads", within: (scope) => ({ campaign_uid: scope.campaignUid ?? "" }), keys: (record) => [{ uid: record.uid }] },
    {
      table: "schedules",
      within: (scope) => ({ campaign_uid: scope.campaignUid ?? "" }),
      keys: (record) => record.schedules.map((item) => ({ id: item.id })),
    },
  ],
  completeness: { table: "leads", within: (scope) => ({ campaign_uid: scope.campaignUid ?? "" }) },
};

/** Natural key of a click, shared by the listing and the copies nested in schedules. */
export function linkClickKey(scheduleId: number, link: string, clickedOn: string): string {
  return compositeKey(scheduleId, link, isoKey(clickedOn));
}

/** The same leads, fetched one by one (#12): how a terminal campaign refreshes just the leads whose schedules got new events. */
export function leadsByUid(uids: readonly string[]): LookupStream<Lead> {
  return {
    name: "lead_refresh",
    kind: "lookup",
    scope: "campaign",
    ids: async () => uids,
    fetch: (client, uid, signal) => client.getLead(String(uid), signal),
    missing: { table: "leads", column: "uid" },
    rows: leadRows,
  };
}
