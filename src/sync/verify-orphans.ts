import { sql, type Kysely } from "kysely";
import type { Database } from "../warehouse/database.ts";
import { CAMPAIGN_CHILDREN } from "./campaign-children.ts";
import { keyList } from "./key-list.ts";
import { keyRows } from "./natural-keys.ts";
import type { VerifyLine } from "./verify.ts";

/**
 * Live rows that hang from a campaign the warehouse holds as deleted, or does not hold at all: nothing
 * upstream lists them (the upstream answers 404 for such a campaign, or never listed it), and no count or key
 * set of verify's other lines looks at a campaign neither side holds live. One line per campaign and table,
 * its keys extra.
 */
export async function orphanLines(db: Kysely<Database>, account: string, campaignUid: string | undefined): Promise<VerifyLine[]> {
  const lines: VerifyLine[] = [];
  for (const { table, column } of CAMPAIGN_CHILDREN.children) {
    const { rows } = await sql<{ uid: string }>`
      SELECT DISTINCT t.${sql.id(column)} AS uid FROM ${sql.id(table)} t
        LEFT JOIN campaigns c ON c.uid = t.${sql.id(column)}
       WHERE t._deleted_at IS NULL
         ${campaignUid === undefined ? sql`` : sql`AND t.${sql.id(column)} = ${campaignUid}`}
         AND (c.uid IS NULL OR (c._account = ${account} AND c._deleted_at IS NOT NULL))
       ORDER BY 1`.execute(db);
    for (const { uid } of rows) {
      const live = await keyRows(db, table, { [column]: uid }, "live");
      lines.push({ campaignUid: uid, stream: table, status: "extra", upstream: 0, warehouse: live.length, rejected: 0, extraKeys: keyList(live.map((row) => row.text)) });
    }
  }
  return lines;
}
