import type { Kysely } from "kysely";
import { emailSequence, type EmailSequence } from "../../upstream/resources.ts";
import type { Database } from "../../warehouse/database.ts";
import { markDeleted } from "../../warehouse/upsert.ts";
import { unknownFields } from "../mapping.ts";
import type { LookupStream } from "../stream.ts";

/**
 * Email sequences have no listing: their ids are discovered in schedules'
 * `email_data` (leads stream) and each is fetched with #9 once, and again only
 * when the copy seen in a schedule changed since the last fetch.
 */
export const emailSequences: LookupStream<EmailSequence> = {
  name: "email_sequences",
  kind: "lookup",
  scope: "campaign",
  ids: async (db, scope, lastCompleteScanAt) => {
    let query = db
      .selectFrom("email_sequences")
      .select("id")
      .where("campaign_uid", "=", scope.campaignUid ?? "")
      .where("_deleted_at", "is", null);
    if (lastCompleteScanAt !== null) {
      // Never fetched in full (no label yet), or its copy in a schedule changed since the last fetch.
      query = query.where((eb) => eb.or([eb("label", "is", null), eb("_synced_at", ">", lastCompleteScanAt)]));
    }
    const rows = await query.orderBy("id").execute();
    return rows.map((row) => Number(row.id));
  },
  fetch: (client, id, signal) => client.getEmailSequence(Number(id), signal),
  missing: { table: "email_sequences", column: "id" },
  rows: (record, scope) => ({
    email_sequences: [
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
      },
    ],
  }),
};

/**
 * Sequences are known only through the schedules that send them, so once a
 * campaign's leads have been walked, a sequence no live schedule sends any
 * more was deleted upstream (deleting a sequence regenerates the schedules).
 */
export async function retireUnreferencedSequences(db: Kysely<Database>, campaignUid: string, at: Date): Promise<number> {
  const referenced = await db
    .selectFrom("schedules")
    .select("email_sequence_id")
    .distinct()
    .where("campaign_uid", "=", campaignUid)
    .where("_deleted_at", "is", null)
    .execute();
  return markDeleted(db, "email_sequences", { campaign_uid: campaignUid }, referenced.map((row) => ({ id: row.email_sequence_id })), at);
}
