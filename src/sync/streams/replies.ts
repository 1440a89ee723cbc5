import { reply, type Reply } from "../../upstream/resources.ts";
import { toDate, unknownFields } from "../mapping.ts";
import type { ListStream } from "../stream.ts";

/** A campaign's replies (#13), unpaginated; merged by id with the copies nested in schedules. */
export const replies: ListStream<Reply> = {
  name: "replies",
  kind: "list",
  scope: "campaign",
  fetch: (client, scope, signal) => client.listReplies(scope.campaignUid ?? "", signal),
  rows: (record, scope) => ({
    replies: [
      {
        id: record.id,
        campaign_uid: scope.campaignUid ?? "",
        schedule_id: record.schedule_id,
        body_plain_text: record.body_plain_text,
        body_html: record.body_html,
        received_on: toDate(record.received_on),
        mail_from: record.mail_from,
        subject: record.subject,
        reply_classification: record.reply_classification,
        _extra: unknownFields(record, reply),
      },
    ],
  }),
  softDelete: [{ table: "replies", within: (scope) => ({ campaign_uid: scope.campaignUid ?? "" }), keys: (record) => [{ id: record.id }] }],
  completeness: { table: "replies", within: (scope) => ({ campaign_uid: scope.campaignUid ?? "" }) },
};
