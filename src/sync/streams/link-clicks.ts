import type { LinkClickEvent } from "../../upstream/resources.ts";
import { toDate } from "../mapping.ts";
import type { PagedStream } from "../stream.ts";
import { linkClickKey } from "./leads.ts";

/** A campaign's link-click events (#14): an append-only log without ids. */
export const linkClicks: PagedStream<LinkClickEvent> = {
  name: "link_clicks",
  kind: "paged",
  scope: "campaign",
  resource: "link_clicks",
  checkpoint: "append",
  key: (record) => linkClickKey(record.schedule_id, record.link, record.clicked_on),
  rows: (record, scope) => ({
    link_clicks: [
      {
        campaign_uid: scope.campaignUid ?? "",
        schedule_id: record.schedule_id,
        link: record.link,
        clicked_on: toDate(record.clicked_on),
      },
    ],
  }),
  softDelete: [
    {
      table: "link_clicks",
      within: (scope) => ({ campaign_uid: scope.campaignUid ?? "" }),
      keys: (record) => [{ schedule_id: record.schedule_id, link: record.link, clicked_on: toDate(record.clicked_on) }],
    },
  ],
  completeness: { table: "link_clicks", within: (scope) => ({ campaign_uid: scope.campaignUid ?? "" }) },
};
