import { sql, type Kysely } from "kysely";
import { TRUTH_ENTITIES, type GroundTruth, type TruthEntity } from "../../src/emulator/options.ts";
import type { Database } from "../../src/warehouse/database.ts";

/**
 * The warehouse's live rows in the emulator's ground-truth key format, so a
 * test can compare the two entity by entity.
 */

/**
 * An event time as the ground truth writes it (eventIso): milliseconds, or six fraction digits when the
 * time carries microseconds (the sub-millisecond fault), so such events are compared to the microsecond.
 */
const iso = (column: string) =>
  sql`regexp_replace(to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), '([.][0-9]{3})000Z$', '\\1Z')`;

/** Per entity, the SQL of a live row's key in the ground truth's format (columns unqualified). */
export const KEY_SQL: Record<TruthEntity, ReturnType<typeof sql>> = {
  workspaces: sql`id::text`,
  domains: sql`id::text`,
  contact_lists: sql`uid`,
  campaigns: sql`uid`,
  campaign_sending_domains: sql`campaign_uid || '|' || domain_id::text`,
  email_sequences: sql`id::text`,
  leads: sql`uid`,
  contacts: sql`id::text`,
  schedules: sql`id::text`,
  replies: sql`id::text`,
  link_clicks: sql`schedule_id::text || '|' || link || '|' || ${iso("clicked_on")}`,
  email_opens: sql`schedule_id::text || '|' || ${iso("opened_on")}`,
};

export async function warehouseKeys(db: Kysely<Database>): Promise<Record<TruthEntity, string[]>> {
  const keys = {} as Record<TruthEntity, string[]>;
  for (const entity of TRUTH_ENTITIES) {
    const result = await sql<{ key: string }>`select ${KEY_SQL[entity]} as key from ${sql.table(entity)} where _deleted_at is null`.execute(db);
    keys[entity] = result.rows.map((row) => row.key).sort();
  }
  return keys;
}

/** Entity by entity: what the warehouse lacks and what it has that the upstream does not. */
export function diffWithTruth(truth: GroundTruth, warehouse: Record<TruthEntity, string[]>) {
  const diff: Partial<Record<TruthEntity, { missing: string[]; extra: string[] }>> = {};
  for (const entity of TRUTH_ENTITIES) {
    const expected = new Set(truth.keys[entity]);
    const actual = new Set(warehouse[entity]);
    const missing = [...expected].filter((key) => !actual.has(key));
    const extra = [...actual].filter((key) => !expected.has(key));
    if (missing.length > 0 || extra.length > 0) diff[entity] = { missing: missing.slice(0, 5), extra: extra.slice(0, 5) };
  }
  return diff;
}
