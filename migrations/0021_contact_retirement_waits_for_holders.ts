import { sql, type Kysely } from "kysely";

/**
 * A contact lives while a live lead holds it (0018), also when two campaigns
 * share it and their transactions overlap. Retiring a contact checked for a
 * live holder with the snapshot its UPDATE took, then waited for the
 * contact's row: another campaign's leads page locks that row when it upserts
 * the contact (even when nothing changes) and then inserts its lead holding
 * it. Once that page committed, the retirement went on without looking
 * again: a live lead held a retired contact, and nothing but that campaign's
 * next walk (days away for a finished campaign) brought it back.
 *
 * The retirement now locks the contacts it may retire first, in id order,
 * with the lock its UPDATE takes anyway, and then checks for holders in a
 * statement of its own, whose snapshot (READ COMMITTED takes one per
 * statement) sees every page that held those rows before it got them. A page
 * that locks them after waits for the retirement to commit and then brings
 * the contact back through the revival (0018), as before. It locks every
 * contact a lead let go of, held elsewhere or not, until its transaction
 * ends: so are two retirements of a shared contact's last two holders kept
 * from each deciding that the other still holds it. Contacts the race
 * already retired beside a live holder are live again, once.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE OR REPLACE FUNCTION retire_orphan_contacts() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM 1 FROM contacts c
          WHERE c._deleted_at IS NULL
            AND c.id IN (SELECT o.contact_id FROM leads_before o JOIN leads_after n ON n.uid = o.uid
                          WHERE o.contact_id IS NOT NULL
                            AND (n._deleted_at IS NOT NULL OR n.contact_id IS DISTINCT FROM o.contact_id))
          ORDER BY c.id FOR NO KEY UPDATE;
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
      END $$`.execute(db);
  await sql`UPDATE contacts c SET _deleted_at = NULL
       WHERE c._deleted_at IS NOT NULL AND EXISTS (SELECT 1 FROM leads l WHERE l.contact_id = c.id AND l._deleted_at IS NULL)`.execute(db);
}
