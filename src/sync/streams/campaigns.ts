import type { CampaignListItem } from "../../upstream/resources.ts";
import { toDate } from "../mapping.ts";
import type { PagedStream } from "../stream.ts";

/**
 * The account's campaign listing (#1). It carries only a campaign's summary;
 * the settings come from campaign_detail, and neither source nulls the other's
 * columns because upserts write only the columns a source provides.
 */
export const campaigns: PagedStream<CampaignListItem> = {
  name: "campaigns",
  kind: "paged",
  scope: "account",
  resource: "campaigns",
  checkpoint: "rescan",
  key: (record) => record.uid,
  rows: (record, scope) => ({
    campaigns: [
      {
        uid: record.uid,
        _account: scope.account,
        name: record.name,
        workspace_id: record.workspace_id,
        created_on: toDate(record.created_on),
        status: record.status,
      },
    ],
  }),
  softDelete: [{ table: "campaigns", within: (scope) => ({ _account: scope.account }), keys: (record) => [{ uid: record.uid }] }],
  completeness: { table: "campaigns", within: (scope) => ({ _account: scope.account }) },
};
