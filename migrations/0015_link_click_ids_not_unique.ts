import { sql, type Kysely } from "kysely";

/**
 * A click's upstream id is no longer held unique. The contract keys a click by
 * (schedule_id, link, clicked_on) alone, and the upsert's conflict target is
 * that key; the id is filled when a schedule's copy tells it. A click whose
 * key changed under the same id (its clicked_on sent to the millisecond after
 * the microsecond, a changed link, two clicks the upstream gave one id) was
 * a new row by its key and a duplicate by its id: the statement failed, and
 * with it the whole leads page, on every run. Nothing looks a click up by its
 * id, so no index takes the constraint's place.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE link_clicks DROP CONSTRAINT link_clicks_id_key`.execute(db);
}
