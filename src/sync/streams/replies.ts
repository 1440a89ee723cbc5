import type { RecordOf } from "../../upstream/client.ts";
import { reply } from "../../upstream/resources.ts";
import { issuesAt } from "../../upstream/tolerant.ts";
import { instant, unknownFields, withoutUnreadable } from "../mapping.ts";
import type { ListStream } from "../stream.ts";

/**
 * A campaign's replies (#13), unpaginated; merged by id with the copies nested
 * in schedules. The listing has no total to check a short answer against, so
 * a reply it leaves out is soft-deleted only when two listings in a row leave
 * it out (run-list.ts).
 */
export const replies: ListStream<RecordOf<"replies">> = {
  name: "replies",
  kind: "list",
  scope: "campaign",
  fetch: (client, scope, signal) => client.listReplies(scope.campaignUid ?? "", signal),
  key: (record) => String(record.id),
  rows: ({ value: record, issues }, { scope, observedAt }) => ({
    replies: [
      withoutUnreadable(
        {
          id: record.id,
          campaign_uid: scope.campaignUid ?? "",
          schedule_id: record.schedule_id,
          body_plain_text: record.body_plain_text,
          body_html: record.body_html,
          received_on: instant(record.received_on),
          mail_from: record.mail_from,
          subject: record.subject,
          reply_classification: record.reply_classification,
          _extra: unknownFields(record, reply),
          _field_issues: issuesAt(issues),
          _observed_at: observedAt,
        },
        issues,
      ),
    ],
  }),
  softDelete: [{ table: "replies", within: (scope) => ({ campaign_uid: scope.campaignUid ?? "" }), keys: (record) => [{ id: record.id }] }],
  completeness: { table: "replies", within: (scope) => ({ campaign_uid: scope.campaignUid ?? "" }) },
};
