import { sql } from "kysely";
import { columnLiterals, columnTypes, keyColumn, typedArrays, type ColumnTypes, type Executor } from "./column-arrays.ts";
import { NATURAL_KEYS, type RowInput, type SyncedTableName } from "./tables.ts";
import { groupByColumns, mergedPerKey, ROWS_PER_STATEMENT } from "./upsert.ts";
import { KEEP_KNOWN } from "./upsert-statement.ts";

/**
 * Which of a source's rows the warehouse holds with other values, and which it
 * does not hold live (`coldsync verify --values`). A column differs exactly when upserting the row would
 * change it: the comparison is the upsert's no-rewrite rule (IS DISTINCT FROM
 * on the same typed arrays, so after the same casts), run by PostgreSQL, so
 * instants compare to the microsecond and jsonb as values, whatever the order
 * of an object's keys.
 *
 * Each row is looked for among the live rows held under its natural key: one
 * not held live (held soft-deleted, or not at all) is `missing`, one held is
 * compared (a row that is all key, a campaign's sending domain, only for its
 * presence). A row held live that the source does not give (extra) is not
 * this comparison's to find: it sees only the rows it is given. Compared are
 * the columns each row provides except its key and the bookkeeping columns (`_extra`,
 * `_field_issues`, `_observed_at`, `_account`, …: how a row was read and whose
 * it is, not what the upstream holds). A column a row leaves out (a field that
 * could not be read) keeps its value in an upsert, so it is not compared; one
 * that keeps its known value (KEEP_KNOWN) differs only where the row gives one.
 */

export interface DifferingRow {
  /** The natural key, each column as text in the form keyRows reads it (instants as canonical text). */
  key: Record<string, string>;
  columns: string[];
}

export interface RowComparison {
  /** Rows compared: those held live. */
  compared: number;
  differing: DifferingRow[];
  /** The natural keys of the rows the warehouse does not hold live, in the form of DifferingRow.key. */
  missing: Record<string, string>[];
}

export async function differingRows<T extends SyncedTableName>(db: Executor, table: T, rows: readonly RowInput<T>[]): Promise<RowComparison> {
  const result: RowComparison = { compared: 0, differing: [], missing: [] };
  if (rows.length === 0) return result;
  const types = await columnTypes(db, table);
  // Merged first, as the upsert merges a call's rows with one key: a later row's values win.
  const comparable = mergedPerKey(table, rows, types).map((row) => comparedPart(table, row as Record<string, unknown>));
  for (const group of groupByColumns(table, comparable)) {
    for (let start = 0; start < group.rows.length; start += ROWS_PER_STATEMENT) {
      const chunk = await compareGroup(db, table, group.columns, group.rows.slice(start, start + ROWS_PER_STATEMENT), types);
      result.compared += chunk.compared;
      result.differing.push(...chunk.differing);
      result.missing.push(...chunk.missing);
    }
  }
  return result;
}

/** The row's key and the columns it has to compare: only its key when it has none (a sending domain's row is all key). */
function comparedPart(table: SyncedTableName, row: Record<string, unknown>): Record<string, unknown> {
  const key: readonly string[] = NATURAL_KEYS[table];
  const part: Record<string, unknown> = {};
  for (const column in row) {
    if (row[column] === undefined || (!key.includes(column) && column.startsWith("_"))) continue;
    part[column] = row[column];
  }
  return part;
}

async function compareGroup(db: Executor, table: SyncedTableName, columns: readonly string[], rows: readonly object[], types: ColumnTypes): Promise<RowComparison> {
  const key: readonly string[] = NATURAL_KEYS[table];
  const keepKnown = KEEP_KNOWN[table] ?? [];
  const held = (column: string) => sql.id("t", column);
  const given = (column: string) => sql.id("r", column);
  // What the upsert would write: a column that keeps its known value is not cleared by a row without one.
  const written = (column: string) => (keepKnown.includes(column) ? sql`COALESCE(${given(column)}, ${held(column)})` : sql`${given(column)}`);
  const differs = columns
    .filter((column) => !key.includes(column))
    .map((column) => sql`CASE WHEN ${held(column)} IS DISTINCT FROM ${written(column)} THEN CAST(${column} AS text) END`);
  // The key as the row gives it (the same values as the held row's, when there is one), so that a row not held has one too.
  const keyText = key.map((column) => sql`CAST(${keyColumn(types, column, "r")} AS text)`);
  // A row that is all key has no column to compare: an array with no elements needs its type.
  const columnsDiffering = differs.length === 0 ? sql`ARRAY[]::text[]` : sql`array_remove(ARRAY[${sql.join(differs)}], NULL)`;
  const literals = columnLiterals(rows, columns, types);
  // Key columns are never null in a held row: one that is null after the LEFT JOIN says the row is not held live.
  const isHeld = sql`${held(key[0] as string)} IS NOT NULL`;
  const { rows: summary } = await sql<{ compared: number; differing: [string[], string[]][] | null; missing: string[][] | null }>`
    SELECT CAST(count(*) FILTER (WHERE d.held) AS integer) AS compared,
           json_agg(json_build_array(d.key, d.columns)) FILTER (WHERE d.held AND cardinality(d.columns) > 0) AS differing,
           json_agg(d.key) FILTER (WHERE NOT d.held) AS missing
      FROM (SELECT ${isHeld} AS held, ARRAY[${sql.join(keyText)}] AS key, ${columnsDiffering} AS columns
              FROM unnest(${typedArrays(table, columns, types, literals)}) AS r(${sql.join(columns.map((column) => sql.id(column)))})
              LEFT JOIN ${sql.id(table)} AS t
                ON ${sql.join(key.map((column) => sql`${held(column)} = ${given(column)}`), sql` AND `)} AND t._deleted_at IS NULL) AS d`.execute(db);
  const { compared = 0, differing = null, missing = null } = summary[0] ?? {};
  const keyOf = (values: string[]) => Object.fromEntries(key.map((column, index) => [column, values[index] as string]));
  return {
    compared,
    differing: (differing ?? []).map(([values, differs]) => ({ key: keyOf(values), columns: differs })),
    missing: (missing ?? []).map(keyOf),
  };
}
