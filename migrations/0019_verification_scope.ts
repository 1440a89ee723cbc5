import { sql, type Kysely } from "kysely";

/**
 * Which campaign a verification checked (null: the whole account). /metrics
 * and the status page show the last verdict on the account: a `verify
 * --campaign` of a healthy campaign replaced it, and the account's known
 * damage vanished from coldsync_verify_problems until the next full one.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE verifications ADD COLUMN campaign_uid text`.execute(db);
}
