import type { RecordOf } from "../../upstream/client.ts";
import { linkClickEvent } from "../../upstream/resources.ts";
import { issuesAt } from "../../upstream/tolerant.ts";
import { instant, unknownFields } from "../mapping.ts";
import type { PagedStream } from "../stream.ts";
import { linkClickKey } from "./leads.ts";

/** A campaign's link-click events (#14): an append-only log without ids, keyed by (schedule_id, link, clicked_on). */
export const linkClicks: PagedStream<RecordOf<"link_clicks">> = {
  name: "link_clicks",
  kind: "paged",
  scope: "campaign",
  resource: "link_clicks",
  checkpoint: "append",
  key: (record) => linkClickKey(record.schedule_id, record.link, record.clicked_on),
  // Every field of the listing's record is part of its key, so a placed record has nothing left to deviate.
  rows: ({ value: record, issues }, { scope }) => ({
    link_clicks: [
      {
        campaign_uid: scope.campaignUid ?? "",
        schedule_id: record.schedule_id,
        link: record.link,
        clicked_on: instant(record.clicked_on),
        _extra: unknownFields(record, linkClickEvent),
        _field_issues: issuesAt(issues),
      },
    ],
  }),
  softDelete: [
    {
      table: "link_clicks",
      within: (scope) => ({ campaign_uid: scope.campaignUid ?? "" }),
      keys: (record) => [{ schedule_id: record.schedule_id, link: record.link, clicked_on: instant(record.clicked_on) }],
    },
  ],
  completeness: { table: "link_clicks", within: (scope) => ({ campaign_uid: scope.campaignUid ?? "" }) },
};
