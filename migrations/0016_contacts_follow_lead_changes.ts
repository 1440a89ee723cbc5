import { sql, type Kysely } from "kysely";

/**
 * A contact exists upstream while a lead holds it (0008), and a lead can let
 * go of one without being deleted: the upstream points it at another contact.
 * The trigger saw only leads soft-deleted, so a contact a live lead dropped
 * stayed live with no lead holding it, on every run. Now every lead row an
 * update changed is read before and after (both transition tables): a
 * contact one of them held before, and that no live lead holds after the
 * statement, is soft-deleted when the lead was (deleted) or written (let
 * go). Contacts already left so are soft-deleted here, once.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const statements = [
    sql`DROP TRIGGER leads_retire_orphan_contacts ON leads`,
    sql`CREATE OR REPLACE FUNCTION retire_orphan_contacts() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE contacts c SET _deleted_at = dropped.at
          FROM (SELECT o.contact_id, max(coalesce(n._deleted_at, n._synced_at)) AS at
                  FROM leads_before o JOIN leads_after n ON n.uid = o.uid
                 WHERE o.contact_id IS NOT NULL
                   AND (n._deleted_at IS NOT NULL OR n.contact_id IS DISTINCT FROM o.contact_id)
                 GROUP BY o.contact_id) AS dropped
         WHERE c.id = dropped.contact_id AND c._deleted_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM leads l WHERE l.contact_id = c.id AND l._deleted_at IS NULL);
        RETURN NULL;
      END $$`,
    sql`CREATE TRIGGER leads_retire_orphan_contacts AFTER UPDATE ON leads
      REFERENCING OLD TABLE AS leads_before NEW TABLE AS leads_after FOR EACH STATEMENT EXECUTE FUNCTION retire_orphan_contacts()`,
    sql`UPDATE contacts c SET _deleted_at = now()
         WHERE c._deleted_at IS NULL AND NOT EXISTS (SELECT 1 FROM leads l WHERE l.contact_id = c.id AND l._deleted_at IS NULL)`,
  ];
  for (const statement of statements) await statement.execute(db);
}
