import type { Lookup, RecordOf, UpstreamClient } from "../../upstream/client.ts";
import { campaignListItem } from "../../upstream/resources.ts";
import { issuesAt, type FieldIssue } from "../../upstream/tolerant.ts";
import { instant, unknownFields, withoutUnreadable } from "../mapping.ts";
import { CAMPAIGN_CHILDREN } from "../campaign-children.ts";
import type { PagedStream } from "../stream.ts";

type ListItem = RecordOf<"campaigns">;

/** Where a list item's field is in a campaign's detail: `name` is its settings' (and unreadable with them). */
function listItemPath(detailPath: string): string | undefined {
  if (detailPath === "settings" || detailPath === "settings.name") return "name";
  const [field] = detailPath.split(".");
  return field !== undefined && field !== "settings" && field in campaignListItem.shape ? detailPath : undefined;
}

/**
 * One campaign by its uid (#2), read as its list item would show it. Its other fields and what deviated in them
 * are campaign_detail's to write.
 */
async function fetchCampaignAsListed(client: UpstreamClient, uid: string | number, signal?: AbortSignal): Promise<Lookup<ListItem>> {
  const { record, observedAt } = await client.getCampaign(String(uid), signal);
  const detail = record.value;
  const value: ListItem = { uid: detail.uid, name: detail.settings?.name ?? null, workspace_id: detail.workspace_id, created_on: detail.created_on, status: detail.status };
  const issues = record.issues.flatMap((issue): FieldIssue[] => {
    const path = listItemPath(issue.path);
    return path === undefined ? [] : [{ ...issue, path }];
  });
  return { record: { value, issues, raw: record.raw }, observedAt };
}

/**
 * The account's campaign listing (#1). It carries only a campaign's summary;
 * the settings come from campaign_detail, and neither source nulls the other's
 * columns because upserts write only the columns a source provides. Both carry
 * the time of their observation, and the older one never overwrites the newer.
 */
export const campaigns: PagedStream<ListItem> = {
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
  // A campaign moved behind the cursor while another went looks like a whole walk, and its deletion would take
  // every lead and event it holds: each campaign the walk did not see is asked for, however many (an account has
  // a few hundred at most), so that none goes on a sample's word.
  confirmMissing: { table: "campaigns", fetch: fetchCampaignAsListed, lookupsPerWalk: Number.POSITIVE_INFINITY },
};
