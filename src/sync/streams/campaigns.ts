import type { RecordOf } from "../../upstream/client.ts";
import { campaignListItem } from "../../upstream/resources.ts";
import { issuesAt } from "../../upstream/tolerant.ts";
import { instant, unknownFields, withoutUnreadable } from "../mapping.ts";
import type { CascadeRule, PagedStream } from "../stream.ts";

/** Everything that hangs from a campaign: soft-deleted with it when the upstream no longer has it. */
export const CAMPAIGN_CHILDREN: CascadeRule = {
  from: "campaigns",
  children: [
    { table: "campaign_sending_domains", column: "campaign_uid" },
    { table: "email_sequences", column: "campaign_uid" },
    { table: "leads", column: "campaign_uid" },
    { table: "schedules", column: "campaign_uid" },
    { table: "replies", column: "campaign_uid" },
    { table: "link_clicks", column: "campaign_uid" },
    { table: "email_opens", column: "campaign_uid" },
  ],
};

/**
 * The account's campaign listing (#1). It carries only a campaign's summary;
 * the settings come from campaign_detail, and neither source nulls the other's
 * columns because upserts write only the columns a source provides. Both carry
 * the time of their observation, and the older one never overwrites the newer.
 */
export const campaigns: PagedStream<RecordOf<"campaigns">> = {
  name: "campaigns",
  kind: "paged",
  scope: "account",
  resource: "campaigns",
  checkpoint: "rescan",
  key: (record) => record.uid,
  rows: ({ value: record, issues }, { scope, observedAt }) => ({
    campaigns: [
      withoutUnreadable(
        {
          uid: record.uid,
          _account: scope.account,
          name: record.name,
          workspace_id: record.workspace_id,
          created_on: instant(record.created_on),
          status: record.status,
          _observed_at: observedAt,
          _extra: unknownFields(record, campaignListItem),
          _field_issues: issuesAt(issues),
        },
        issues,
      ),
    ],
  }),
  softDelete: [{ table: "campaigns", within: (scope) => ({ _account: scope.account }), keys: (record) => [{ uid: record.uid }] }],
  cascade: [CAMPAIGN_CHILDREN],
  completeness: { table: "campaigns", within: (scope) => ({ _account: scope.account }) },
};
