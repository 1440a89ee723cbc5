import type { Kysely } from "kysely";
import type { RecordOf } from "../../upstream/client.ts";
import { emailSequence } from "../../upstream/resources.ts";
import { issuesAt } from "../../upstream/tolerant.ts";
import type { Database } from "../../warehouse/database.ts";
import { markDeleted } from "../../warehouse/upsert.ts";
import { unknownFields, withoutUnreadable } from "../mapping.ts";
import type { LookupStream } from "../stream.ts";

/**
 * Email sequences have no listing: their ids are discovered in schedules'
 * `email_data` (leads stream), and every sequence of the campaign that is live
 * or that a live schedule sends is fetched with #9 on each of the campaign's
 * cycles, so that a label, score, verdict or approval flag that changed is
 * seen. #9 alone says whether a sequence exists: the copies in schedules only
 * add fields (the leads stream's `copiesInto`), so a sequence #9 no longer
 * knows stays deleted while schedules still name it, instead of coming back
 * with every walk of the leads to be deleted again; and one a schedule sends
 * again is asked for, and comes back if #9 answers.
 */
export const emailSequences: LookupStream<RecordOf<"email_sequences">> = {
  name: "email_sequences",
  kind: "lookup",
  scope: "campaign",
  ids: async (db, scope) => {
    const campaignUid = scope.campaignUid ?? "";
    const live = db.selectFrom("email_sequences").select("id").where("campaign_uid", "=", campaignUid).where("_deleted_at", "is", null);
    const rows = await live.union(sentByLiveSchedules(db, campaignUid)).orderBy("id").execute();
    return rows.map((row) => Number(row.id));
  },
  // A sequence neither live nor sent by a live schedule was deleted upstream (retireUnreferencedSequences): not asked for again.
  idsNameAll: true,
  fetch: (client, id, signal) => client.getEmailSequence(Number(id), signal),
  missing: { table: "email_sequences", column: "id" },
  key: (record) => String(record.id),
  rows: ({ value: record, issues }, { scope }) => ({
    email_sequences: [
      withoutUnreadable(
        {
          id: record.id,
          campaign_uid: scope.campaignUid ?? "",
          subject: record.subject,
          body: record.body,
          order: record.order,
          next_message_days: record.next_message_days,
          score: record.score,
          verdict: record.verdict,
          suggestions: record.suggestions ?? null,
          label: record.label,
          blocked_reason: record.blocked_reason,
          is_flagged_for_approval: record.is_flagged_for_approval,
          block_approval: record.block_approval,
          email_content_type: record.email_content_type,
          _extra: unknownFields(record, emailSequence),
          _field_issues: issuesAt(issues),
        },
        issues,
      ),
    ],
  }),
};

/**
 * Sequences are known only through the schedules that send them, so once a
 * campaign's leads have been walked in full, a sequence no live schedule sends
 * any more was deleted upstream (deleting a sequence regenerates the schedules).
 */
export async function retireUnreferencedSequences(db: Kysely<Database>, campaignUid: string, at: Date): Promise<number> {
  const referenced = await sentByLiveSchedules(db, campaignUid).distinct().execute();
  return markDeleted(db, "email_sequences", { campaign_uid: campaignUid }, referenced, at);
}

/** The ids of the sequences the campaign's live schedules send. */
function sentByLiveSchedules(db: Kysely<Database>, campaignUid: string) {
  return db
    .selectFrom("schedules")
    .select("email_sequence_id as id")
    .where("campaign_uid", "=", campaignUid)
    .where("_deleted_at", "is", null)
    .where("email_sequence_id", "is not", null)
    .$narrowType<{ id: number }>();
}
