import { sql, type Kysely } from "kysely";

/**
 * The contact triggers on `leads` (retire_orphan_contacts, revive_held_contacts)
 * name `contacts` and `leads` unqualified, and ran on the calling session's
 * search_path: a hand edit of a lead from psql's default path failed
 * (`relation "contacts" does not exist`), and a statement on one account's
 * leads from a session whose path pointed at another account's schema read and
 * wrote that schema's contacts. They pin the warehouse schema now, as the
 * history functions always have.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER FUNCTION retire_orphan_contacts() SET search_path FROM CURRENT`.execute(db);
  await sql`ALTER FUNCTION revive_held_contacts() SET search_path FROM CURRENT`.execute(db);
}
