import { sql, type Kysely, type RawBuilder, type Transaction } from "kysely";
import { INSTANT_SQL_FORMAT } from "../upstream/instant.ts";
import { columnLiteral } from "./array-literal.ts";
import type { Database } from "./database.ts";
import type { SyncedTableName } from "./tables.ts";

/**
 * Rows travel to PostgreSQL as one typed array per column, unpacked with
 * unnest(): one parameter per column whatever the number of rows. The array
 * types are the columns' own, read from the catalog once per table.
 */

export type Executor = Kysely<Database> | Transaction<Database>;

export type ColumnTypes = ReadonlyMap<string, string>;

/**
 * SQL types of a table's columns, as the migrations made them. Every warehouse
 * a process opens runs the same migrations, so one lookup per table serves all.
 */
const columnTypeCache = new Map<string, ColumnTypes>();

export async function columnTypes(db: Executor, table: SyncedTableName): Promise<ColumnTypes> {
  const cached = columnTypeCache.get(table);
  if (cached !== undefined) return cached;
  const { rows } = await sql<{ name: string; type: string }>`
    SELECT attname AS name, format_type(atttypid, atttypmod) AS type
      FROM pg_attribute
     WHERE attrelid = CAST(${table} AS regclass) AND attnum > 0 AND NOT attisdropped`.execute(db);
  const types = new Map(rows.map((row) => [row.name, row.type]));
  columnTypeCache.set(table, types);
  return types;
}

export function typeOf(types: ColumnTypes, table: SyncedTableName, column: string): string {
  const type = types.get(column);
  if (type === undefined) throw new Error(`${table} has no column ${column}`);
  return type;
}

/** Each column of a chunk as one array literal. */
export function columnLiterals(rows: readonly object[], columns: readonly string[], types: ColumnTypes): string[] {
  const records = rows as readonly Record<string, unknown>[];
  return columns.map((column) => columnLiteral(records, column, types.get(column) === "jsonb"));
}

/** `CAST(literal AS type[])` for each column, in order, for unnest(). */
export function typedArrays(table: SyncedTableName, columns: readonly string[], types: ColumnTypes, literals: readonly unknown[]) {
  return sql.join(columns.map((column, index) => sql`CAST(${literals[index]} AS ${sql.raw(typeOf(types, table, column))}[])`));
}

/**
 * A key column as keys are read back to be compared as text: an instant as
 * canonical instant text to the microsecond (src/upstream/instant.ts), since a
 * Date read back would keep only milliseconds. `row` qualifies the column.
 */
export function keyColumn(types: ColumnTypes, column: string, row?: string): RawBuilder<unknown> {
  const ref = row === undefined ? sql.ref(column) : sql.id(row, column);
  return types.get(column) === "timestamp with time zone" ? sql`to_char(${ref} AT TIME ZONE 'UTC', ${INSTANT_SQL_FORMAT})` : sql`${ref}`;
}
