import { sql, type Kysely } from "kysely";
import { columnTypes, keyColumn } from "../warehouse/column-arrays.ts";
import type { Database } from "../warehouse/database.ts";
import { NATURAL_KEYS, type SyncedTableName } from "../warehouse/tables.ts";

/**
 * One text per natural key, the same for a key built from a record and one
 * read back from the warehouse: instants in keys are canonical instant text
 * to the microsecond (src/upstream/instant.ts), which keyRows has PostgreSQL
 * write, since a Date read back would keep only milliseconds.
 */
export function naturalKeyText(table: SyncedTableName, key: Record<string, unknown>): string {
  return NATURAL_KEYS[table].map((column) => String(key[column])).join("|");
}

/** A row's natural key as the warehouse holds it. */
export interface KeyRow {
  /** The key columns, instants as canonical text. */
  key: Record<string, unknown>;
  text: string;
  live: boolean;
}

/** The natural keys of the rows of `table` within `filter`: every row, or only live ones. */
export async function keyRows(db: Kysely<Database>, table: SyncedTableName, filter: Record<string, string>, which: "all" | "live"): Promise<KeyRow[]> {
  const types = await columnTypes(db, table);
  const columns = NATURAL_KEYS[table].map((column) => keyColumn(types, column).as(column));
  let query = db.selectFrom(table).select([...columns, sql<boolean>`${sql.ref("_deleted_at")} IS NULL`.as("_live")]);
  if (which === "live") query = query.where(sql.ref("_deleted_at"), "is", null);
  for (const [column, value] of Object.entries(filter)) query = query.where(sql.ref(column), "=", value);
  const rows = (await query.execute()) as ({ _live: boolean } & Record<string, unknown>)[];
  return rows.map(({ _live, ...key }) => ({ key, text: naturalKeyText(table, key), live: _live }));
}
