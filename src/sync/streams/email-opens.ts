import type { RecordOf } from "../../upstream/client.ts";
import { emailOpenEvent } from "../../upstream/resources.ts";
import { issuesAt } from "../../upstream/tolerant.ts";
import { compositeKey, instant, unknownFields } from "../mapping.ts";
import type { PagedStream } from "../stream.ts";

/** A campaign's email-open events (#15): an append-only log keyed by (schedule_id, opened_on). */
export const emailOpens: PagedStream<RecordOf<"email_opens">> = {
  name: "email_opens",
  kind: "paged",
  scope: "campaign",
  resource: "email_opens",
  checkpoint: "append",
  key: (record) => compositeKey(record.schedule_id, instant(record.opened_on)),
  // Every field of the record is part of its key, so a placed record has nothing left to deviate.
  rows: ({ value: record, issues }, { scope }) => ({
    email_opens: [
      {
        campaign_uid: scope.campaignUid ?? "",
        schedule_id: record.schedule_id,
        opened_on: instant(record.opened_on),
        _extra: unknownFields(record, emailOpenEvent),
        _field_issues: issuesAt(issues),
      },
    ],
  }),
  softDelete: [
    {
      table: "email_opens",
      within: (scope) => ({ campaign_uid: scope.campaignUid ?? "" }),
      keys: (record) => [{ schedule_id: record.schedule_id, opened_on: instant(record.opened_on) }],
    },
  ],
  completeness: { table: "email_opens", within: (scope) => ({ campaign_uid: scope.campaignUid ?? "" }) },
};
