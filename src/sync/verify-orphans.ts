import { sql, type Kysely } from "kysely";
import type { Database } from "../warehouse/database.ts";
import { CAMPAIGN_CHILDREN } from "./campaign-children.ts";
import { keyList } from "./key-list.ts";
import { keyRows } from "./natural-keys.ts";
import type { VerifyLine } from "./verify.ts";

/**
 * Live rows that hang from a campaign the warehouse holds as deleted, or does not hold at all, and the upstream
 * does not list (`listedUpstream`): nothing upstream lists them (the upstream answers 404 for such a campaign,
 * or never listed it), and no count or key set of verify's other lines looks at a campaign neither side holds
 * live. One line per campaign and table, its keys extra. A campaign the upstream still lists but the warehouse
 * holds deleted is named missing by the campaigns line, and its children are compared by its own lines.
 */
export async function orphanLines(db: Kysely<Database>, account: string, campaignUid: string | undefined, listedUpstream: ReadonlySet<string>): Promise<VerifyLine[]> {
  const lines: VerifyLine[] = campaignUid === undefined ? await orphanContactLines(db, account) : [];
  for (const { table, column } of CAMPAIGN_CHILDREN.children) {
    const { rows } = await sql<{ uid: string }>`
      SELECT DISTINCT t.${sql.id(column)} AS uid FROM ${sql.id(table)} t
        LEFT JOIN campaigns c ON c.uid = t.${sql.id(column)}
       WHERE t._deleted_at IS NULL
         ${campaignUid === undefined ? sql`` : sql`AND t.${sql.id(column)} = ${campaignUid}`}
         AND (c.uid IS NULL OR (c._account = ${account} AND c._deleted_at IS NOT NULL))
       ORDER BY 1`.execute(db);
    for (const { uid } of rows) {
      if (listedUpstream.has(uid)) continue;
      const live = await keyRows(db, table, { [column]: uid }, "live");
      lines.push({ campaignUid: uid, stream: table, status: "extra", upstream: 0, warehouse: live.length, rejected: 0, extraKeys: keyList(live.map((row) => row.text)) });
    }
  }
  return lines;
}

/**
 * Contacts out of step with the leads that hold them: a contact exists upstream while a lead holds it, and the
 * warehouse retires one with the last lead that let go of it and brings it back with any live lead written
 * holding it (migrations 0008, 0016, 0018, 0021). A live contact no live lead holds is `extra`; one a live lead
 * of this account holds is `missing` when it is retired or not held at all. Contacts carry no account:
 * one that a lead of another account names is that account's to judge.
 */
async function orphanContactLines(db: Kysely<Database>, account: string): Promise<VerifyLine[]> {
  const { rows: unheld } = await sql<{ id: string }>`
    SELECT c.id::text AS id FROM contacts c
     WHERE c._deleted_at IS NULL
       AND NOT EXISTS (SELECT 1 FROM leads l WHERE l.contact_id = c.id AND l._deleted_at IS NULL)
       AND NOT EXISTS (SELECT 1 FROM leads l JOIN campaigns k ON k.uid = l.campaign_uid WHERE l.contact_id = c.id AND k._account <> ${account})
     ORDER BY c.id`.execute(db);
  const { rows: heldRetired } = await sql<{ id: string }>`
    SELECT l.contact_id::text AS id FROM leads l
      JOIN campaigns k ON k.uid = l.campaign_uid
      LEFT JOIN contacts c ON c.id = l.contact_id
     WHERE l._deleted_at IS NULL AND k._account = ${account} AND l.contact_id IS NOT NULL
       AND (c.id IS NULL OR c._deleted_at IS NOT NULL)
     GROUP BY l.contact_id
     ORDER BY l.contact_id`.execute(db);
  const lines: VerifyLine[] = [];
  if (unheld.length > 0) {
    lines.push({ campaignUid: null, stream: "contacts", status: "extra", upstream: 0, warehouse: unheld.length, rejected: 0, extraKeys: keyList(unheld.map((row) => row.id)) });
  }
  if (heldRetired.length > 0) {
    const missingKeys = keyList(heldRetired.map((row) => row.id));
    lines.push({ campaignUid: null, stream: "contacts", status: "missing", upstream: heldRetired.length, warehouse: 0, rejected: 0, missingKeys });
  }
  return lines;
}
