import { campaign, campaignSettings, type Campaign } from "../../upstream/resources.ts";
import { toDate, unknownFields } from "../mapping.ts";
import type { LookupStream } from "../stream.ts";

function extraOf(record: Campaign): Record<string, unknown> | null {
  const top = unknownFields(record, campaign);
  const settings = unknownFields(record.settings, campaignSettings);
  if (top === null && settings === null) return null;
  return { ...top, ...(settings === null ? {} : { settings }) };
}

/** One campaign in full (#2): settings flattened onto `campaigns`, sending domains as child rows. */
export const campaignDetail: LookupStream<Campaign> = {
  name: "campaign_detail",
  kind: "lookup",
  scope: "campaign",
  ids: async (_db, scope) => (scope.campaignUid === null ? [] : [scope.campaignUid]),
  fetch: (client, uid, signal) => client.getCampaign(String(uid), signal),
  missing: { table: "campaigns", column: "uid" },
  rows: (record, scope) => {
    const settings = record.settings;
    return {
      campaigns: [
        {
          uid: record.uid,
          _account: scope.account,
          name: settings.name,
          workspace_id: record.workspace_id,
          created_on: toDate(record.created_on),
          status: record.status,
          scheduled_start_datetime: toDate(record.scheduled_start_datetime),
          bounces: record.bounces,
          campaign_paused: record.campaign_paused,
          campaign_paused_on: toDate(record.campaign_paused_on),
          is_generating_schedules: record.is_generating_schedules,
          is_deleting_schedules: record.is_deleting_schedules,
          archived: record.archived,
          is_campaign_bounce_blocked: record.is_campaign_bounce_blocked,
          started_running_at: toDate(record.started_running_at),
          completed_at: toDate(record.completed_at),
          cancelled_at: toDate(record.cancelled_at),
          selected_contact_lists: record.selected_contact_lists,
          reply_to_address: settings.reply_to_address,
          daily_email_limit: settings.daily_email_limit,
          skip_days: settings.skip_days,
          single_subject: settings.single_subject,
          scheduling_strategy: settings.scheduling_strategy,
          from_time: settings.from_time,
          to_time: settings.to_time,
          time_zone: settings.time_zone,
          add_unsub_link: settings.add_unsub_link,
          unsub_link_type: settings.unsub_link_type,
          custom_unsub_text: settings.custom_unsub_text,
          click_tracking_enabled: settings.click_tracking_enabled,
          open_tracking_enabled: settings.open_tracking_enabled,
          skip_dangerous_emails: settings.skip_dangerous_emails,
          skip_disposable_emails: settings.skip_disposable_emails,
          skip_catchall_emails: settings.skip_catchall_emails,
          skip_full_inbox_emails: settings.skip_full_inbox_emails,
          skip_invalid_emails: settings.skip_invalid_emails,
          forward_negative_emails: settings.forward_negative_emails,
          forward_netural_emails: settings.forward_netural_emails,
          _extra: extraOf(record),
        },
      ],
      campaign_sending_domains: settings.sending_domains.map((domainId) => ({ campaign_uid: record.uid, domain_id: domainId })),
    };
  },
  softDelete: [
    {
      table: "campaign_sending_domains",
      within: (scope) => ({ campaign_uid: scope.campaignUid ?? "" }),
      keys: (record) => record.settings.sending_domains.map((domainId) => ({ campaign_uid: record.uid, domain_id: domainId })),
    },
  ],
};
