import type { RecordOf } from "../../upstream/client.ts";
import { campaign, campaignSettings } from "../../upstream/resources.ts";
import { issuesAt } from "../../upstream/tolerant.ts";
import { instant, unknownFields, withoutUnreadable } from "../mapping.ts";
import { CAMPAIGN_CHILDREN, campaignDetailSuperseded } from "../campaign-children.ts";
import type { LookupStream } from "../stream.ts";

type Campaign = RecordOf<"campaign_detail">;

/** Columns of `campaigns` that come from the nested settings object. */
const SETTINGS_COLUMNS: ReadonlySet<string> = new Set(Object.keys(campaignSettings.shape));

function extraOf(record: Campaign): Record<string, unknown> | null {
  const top = unknownFields(record, campaign);
  const settings = unknownFields(record.settings, campaignSettings);
  if (top === null && settings === null) return null;
  return { ...top, ...(settings === null ? {} : { settings }) };
}

/** The sending domain ids that could be read: an unreadable one is named on the campaign's row, and costs no other. */
function readableSendingDomains(record: Campaign): number[] {
  return (record.settings?.sending_domains ?? []).filter((id) => id !== null);
}

/**
 * The sending domains the campaign vouches for, or null when its list (or one of its ids) could not be read: a
 * domain it no longer lists cannot then be told from the unreadable one, so none is taken for removed.
 */
function listedSendingDomains(record: Campaign): number[] | null {
  const ids = record.settings?.sending_domains ?? null;
  return ids === null || ids.includes(null) ? null : readableSendingDomains(record);
}

/** One campaign in full (#2): settings flattened onto `campaigns`, sending domains as child rows. */
export const campaignDetail: LookupStream<Campaign> = {
  name: "campaign_detail",
  kind: "lookup",
  scope: "campaign",
  ids: async (_db, scope) => (scope.campaignUid === null ? [] : [scope.campaignUid]),
  // The scope's one campaign, asked for every cycle: no answer in its scope is ever for an id it no longer names
  // (a deleted campaign's answers are resolved with its deletion, CAMPAIGN_CHILDREN), so nothing to look for.
  idsNameAll: false,
  fetch: (client, uid, signal) => client.getCampaign(String(uid), signal),
  missing: { table: "campaigns", column: "uid" },
  cascade: [CAMPAIGN_CHILDREN],
  key: (record) => record.uid,
  rows: ({ value: record, issues }, { scope, observedAt }) => {
    const settings = record.settings;
    const campaignRow = withoutUnreadable(
      {
        uid: record.uid,
        _account: scope.account,
        name: settings?.name ?? null,
        workspace_id: record.workspace_id,
        created_on: instant(record.created_on),
        status: record.status,
        scheduled_start_datetime: instant(record.scheduled_start_datetime),
        bounces: record.bounces,
        campaign_paused: record.campaign_paused,
        campaign_paused_on: instant(record.campaign_paused_on),
        is_generating_schedules: record.is_generating_schedules,
        is_deleting_schedules: record.is_deleting_schedules,
        archived: record.archived,
        is_campaign_bounce_blocked: record.is_campaign_bounce_blocked,
        started_running_at: instant(record.started_running_at),
        completed_at: instant(record.completed_at),
        cancelled_at: instant(record.cancelled_at),
        selected_contact_lists: record.selected_contact_lists,
        reply_to_address: settings?.reply_to_address ?? null,
        daily_email_limit: settings?.daily_email_limit ?? null,
        skip_days: settings?.skip_days ?? null,
        single_subject: settings?.single_subject ?? null,
        scheduling_strategy: settings?.scheduling_strategy ?? null,
        from_time: settings?.from_time ?? null,
        to_time: settings?.to_time ?? null,
        time_zone: settings?.time_zone ?? null,
        add_unsub_link: settings?.add_unsub_link ?? null,
        unsub_link_type: settings?.unsub_link_type ?? null,
        custom_unsub_text: settings?.custom_unsub_text ?? null,
        click_tracking_enabled: settings?.click_tracking_enabled ?? null,
        open_tracking_enabled: settings?.open_tracking_enabled ?? null,
        skip_dangerous_emails: settings?.skip_dangerous_emails ?? null,
        skip_disposable_emails: settings?.skip_disposable_emails ?? null,
        skip_catchall_emails: settings?.skip_catchall_emails ?? null,
        skip_full_inbox_emails: settings?.skip_full_inbox_emails ?? null,
        skip_invalid_emails: settings?.skip_invalid_emails ?? null,
        forward_negative_emails: settings?.forward_negative_emails ?? null,
        forward_netural_emails: settings?.forward_netural_emails ?? null,
        _observed_at: observedAt,
        _detail_observed_at: observedAt,
        _extra: extraOf(record),
        _field_issues: issuesAt(issues),
      },
      issues,
      "",
      (column) => (SETTINGS_COLUMNS.has(column) ? `settings.${column}` : column),
    );
    return {
      campaigns: [campaignRow],
      campaign_sending_domains: readableSendingDomains(record).map((domainId) => ({ campaign_uid: record.uid, domain_id: domainId })),
    };
  },
  softDelete: [
    {
      table: "campaign_sending_domains",
      within: (scope) => ({ campaign_uid: scope.campaignUid ?? "" }),
      keys: (record) => listedSendingDomains(record)?.map((domainId) => ({ campaign_uid: record.uid, domain_id: domainId })) ?? null,
    },
  ],
  supersededIn: campaignDetailSuperseded,
};
