import { sql, type Kysely } from "kysely";

/**
 * What a copy of a lead means for the rows it carries.
 *
 * Schedules and contacts exist only as copies inside leads (a lead's
 * schedules, its contact), read by the leads walk and by the one-by-one
 * refresh at different moments. The newest copy decides, in both directions:
 * an open the upstream took back lowers the count again. `_observed_at` is
 * when the copy that last changed the row was read (requested); a copy read
 * earlier never overwrites it. Rows from before this migration were observed
 * at '-infinity', so any copy wins over them.
 *
 * A contact exists upstream while a lead holds it: when the last live lead
 * that holds a contact is soft-deleted (a lead gone upstream, a campaign gone
 * with its leads), the contact is soft-deleted at the same time, whichever
 * path deleted the lead. A lead that holds it again brings it back.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const statements = [
    sql`ALTER TABLE schedules ADD COLUMN _observed_at timestamptz NOT NULL DEFAULT '-infinity'`,
    sql`ALTER TABLE contacts ADD COLUMN _observed_at timestamptz NOT NULL DEFAULT '-infinity'`,
    sql`CREATE FUNCTION retire_orphan_contacts() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE contacts c SET _deleted_at = gone._deleted_at
          FROM (SELECT contact_id, max(_deleted_at) AS _deleted_at FROM deleted_leads
                 WHERE _deleted_at IS NOT NULL AND contact_id IS NOT NULL GROUP BY contact_id) AS gone
         WHERE c.id = gone.contact_id AND c._deleted_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM leads l WHERE l.contact_id = c.id AND l._deleted_at IS NULL);
        RETURN NULL;
      END $$`,
    sql`CREATE TRIGGER leads_retire_orphan_contacts AFTER UPDATE ON leads
      REFERENCING NEW TABLE AS deleted_leads FOR EACH STATEMENT EXECUTE FUNCTION retire_orphan_contacts()`,
  ];
  for (const statement of statements) await statement.execute(db);
}
