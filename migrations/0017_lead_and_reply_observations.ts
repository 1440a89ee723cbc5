import { sql, type Kysely } from "kysely";

/**
 * Leads and replies are read by two requests each, in different jobs that
 * hold different locks: a lead by its campaign's leads listing (#11) and by
 * its own lookup (#12, the stale-leads check); a reply by the campaign's
 * reply listing (#13) and as a copy inside its lead's schedule. A read made
 * before another and committed after it overwrote what the newer one wrote
 * (a reply's classification, a lead's sender or contact) until the next read.
 *
 * As for schedules and contacts (0008), `_observed_at` is when the read that
 * last changed the row was made (requested), and an older read never
 * overwrites it. A reply's copy and its listing carry different columns
 * (lead_uid; mail_from and subject): a column only one of them carries is
 * written whenever that one reads it. Rows from before this migration were
 * observed at '-infinity', so any read wins over them. Adding a column with
 * a constant default rewrites no table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE leads ADD COLUMN _observed_at timestamptz NOT NULL DEFAULT '-infinity'`.execute(db);
  await sql`ALTER TABLE replies ADD COLUMN _observed_at timestamptz NOT NULL DEFAULT '-infinity'`.execute(db);
}
