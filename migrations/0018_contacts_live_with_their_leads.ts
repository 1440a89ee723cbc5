import { sql, type Kysely } from "kysely";

/**
 * A contact lives while a live lead holds it (0008, 0016), whichever read
 * wrote what. Two holes remained:
 * - a contact retired with the last lead that let go of it was still dated by
 *   its own last change, so a leads page requested before that and written
 *   after it brought the contact back beside a lead that stayed deleted; the
 *   retirement now moves the contact's `_observed_at` to the lead's (a lead's
 *   deletion moves the lead's to when the read that found it gone started);
 * - a contact came back only through its own upsert, which an older read may
 *   not make: a page requested before another campaign's lead let go of a
 *   shared contact, and written after, inserted a live lead holding a retired
 *   contact. Now any live lead an insert or update writes brings back the
 *   contact it holds.
 * The partial index keeps that look at the few retired contacts, however
 * many leads a statement writes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const statements = [
    sql`CREATE INDEX contacts_retired_idx ON contacts (id) WHERE _deleted_at IS NOT NULL`,
    sql`CREATE OR REPLACE FUNCTION retire_orphan_contacts() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE contacts c SET _deleted_at = dropped.at, _observed_at = GREATEST(c._observed_at, dropped.observed_at)
          FROM (SELECT o.contact_id, max(coalesce(n._deleted_at, n._synced_at)) AS at, max(n._observed_at) AS observed_at
                  FROM leads_before o JOIN leads_after n ON n.uid = o.uid
                 WHERE o.contact_id IS NOT NULL
                   AND (n._deleted_at IS NOT NULL OR n.contact_id IS DISTINCT FROM o.contact_id)
                 GROUP BY o.contact_id) AS dropped
         WHERE c.id = dropped.contact_id AND c._deleted_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM leads l WHERE l.contact_id = c.id AND l._deleted_at IS NULL);
        UPDATE contacts c SET _deleted_at = NULL
         WHERE c._deleted_at IS NOT NULL AND c.id IN (SELECT contact_id FROM leads_after WHERE _deleted_at IS NULL);
        RETURN NULL;
      END $$`,
    sql`CREATE FUNCTION revive_held_contacts() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE contacts c SET _deleted_at = NULL
         WHERE c._deleted_at IS NOT NULL AND c.id IN (SELECT contact_id FROM leads_inserted WHERE _deleted_at IS NULL);
        RETURN NULL;
      END $$`,
    sql`CREATE TRIGGER leads_revive_held_contacts AFTER INSERT ON leads
      REFERENCING NEW TABLE AS leads_inserted FOR EACH STATEMENT EXECUTE FUNCTION revive_held_contacts()`,
    // Contacts retired while a live lead holds them (what the second hole left): live again, once.
    sql`UPDATE contacts c SET _deleted_at = NULL
         WHERE c._deleted_at IS NOT NULL AND EXISTS (SELECT 1 FROM leads l WHERE l.contact_id = c.id AND l._deleted_at IS NULL)`,
  ];
  for (const statement of statements) await statement.execute(db);
}
