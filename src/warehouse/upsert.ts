import { setImmediate as nextTurn } from "node:timers/promises";
import type { QueryResult } from "kysely";
import { addStage, stageStart } from "../stage-timings.ts";
import { parseInstant } from "../upstream/instant.ts";
import { columnLiterals, columnTypes, type ColumnTypes, type Executor } from "./column-arrays.ts";
import { NATURAL_KEYS, UNWRITABLE_COLUMNS, type RowInput, type SyncedTableName } from "./tables.ts";
import { compiledUpsert, type UpsertResult } from "./upsert-statement.ts";

export { markDeleted } from "./mark-deleted.ts";
export { recordRejected, type RejectedRecordInput } from "./rejected.ts";
export type { UpsertResult } from "./upsert-statement.ts";

/**
 * Writing synced rows (contract B).
 *
 * Each chunk of rows travels as one typed array per column and is unpacked
 * with unnest(): one parameter per column whatever the chunk size, so no
 * parameter limit, and (measured on 100,000 rows) a third faster than the same
 * statement fed by jsonb_populate_recordset and well ahead of multi-row VALUES.
 * While the database writes one chunk, the next chunk's arrays are being built.
 *
 * Rows may be partial: only the columns present are inserted or updated, which
 * is how two sources of one table merge without nulling each other's fields,
 * and how a field that could not be read overwrites nothing. Rows of one call
 * with the same key are merged first, as if written one after the other (a
 * later row's values win, a column only an earlier one has is kept); rows
 * that carry different columns are then written by one statement per column
 * set.
 * An upsert that changes nothing writes nothing: the conflict update is guarded
 * by IS DISTINCT FROM, so an unchanged replay creates no new tuple.
 *
 * Two columns have rules of their own:
 * - `_field_issues` arrives as one source's issues and is merged with the
 *   other sources' (merge_field_issues(), migration 0005);
 * - `_observed_at` (campaigns) orders observations: an older one never
 *   overwrites a newer one, and a newer one that changes nothing moves
 *   `_observed_at` but not `_synced_at`. A campaign's detail also carries
 *   `_detail_observed_at`, which orders the columns only it reads. The
 *   statement itself is built in upsert-statement.ts.
 */

/** Rows per statement: large enough to amortise a round trip, small enough to keep one statement's memory modest. */
export const ROWS_PER_STATEMENT = 5_000;

export interface UpsertOptions {
  /** Whose field issues the rows carry (the stream that read them); required when they carry `_field_issues`. */
  source?: string;
  /**
   * False for copies of records whose existence another source decides (a reply nested in a schedule,
   * beside the reply listing): they add fields, but never bring a soft-deleted row back.
   */
  revive?: boolean;
}

export async function upsert<T extends SyncedTableName>(
  db: Executor,
  table: T,
  rows: readonly RowInput<T>[],
  syncedAt: Date,
  options: UpsertOptions = {},
): Promise<UpsertResult> {
  const total = { inserted: 0, updated: 0 };
  if (rows.length === 0) return total;
  const types = await columnTypes(db, table);
  const groupStart = stageStart();
  const groups = groupByColumns(table, mergedPerKey(table, rows, types));
  addStage("sqlBuild", groupStart);
  for (const group of groups) {
    const result = await upsertGroup(db, table, group.columns, group.rows, types, syncedAt, options);
    total.inserted += result.inserted;
    total.updated += result.updated;
  }
  return total;
}

async function upsertGroup(
  db: Executor,
  table: SyncedTableName,
  columns: readonly string[],
  rows: readonly object[],
  types: ColumnTypes,
  syncedAt: Date,
  options: UpsertOptions,
): Promise<UpsertResult> {
  if (columns.includes("_field_issues") && options.source === undefined) throw new Error(`upsert into ${table}: rows with _field_issues need their source`);
  const buildStart = stageStart();
  const statement = compiledUpsert(db, table, columns, types, options.source ?? "", options.revive ?? true);
  addStage("sqlBuild", buildStart);
  const literalsFrom = (start: number) => {
    const literalsStart = stageStart();
    const literals = columnLiterals(rows.slice(start, start + ROWS_PER_STATEMENT), columns, types);
    addStage("sqlBuild", literalsStart);
    return literals;
  };
  const nextChunk = async (start: number): Promise<string[] | undefined> => {
    if (start >= rows.length) return undefined;
    await nextTurn(); // lets the driver send the running statement first
    return literalsFrom(start);
  };
  const total = { inserted: 0, updated: 0 };
  let literals: string[] | undefined = literalsFrom(0);
  for (let start = 0; literals !== undefined; start += ROWS_PER_STATEMENT) {
    const running: Promise<QueryResult<UpsertResult>> = db.executeQuery(statement(literals, syncedAt));
    const [result, next] = await Promise.all([running, nextChunk(start + ROWS_PER_STATEMENT)]);
    total.inserted += result.rows[0]?.inserted ?? 0;
    total.updated += result.rows[0]?.updated ?? 0;
    literals = next;
  }
  return total;
}

/**
 * One row per natural key: a statement that met a key twice would fail
 * ("cannot affect row a second time"). Rows with one key merge in order, each
 * column taking its last defined value. Keys are compared as PostgreSQL will:
 * a timestamptz given as a Date or as text is one instant, to the microsecond.
 */
export function mergedPerKey(table: SyncedTableName, rows: readonly object[], types: ColumnTypes): readonly object[] {
  const key: readonly string[] = NATURAL_KEYS[table];
  const part = (column: string, value: unknown): string => {
    if (value instanceof Date) return `${value.toISOString().slice(0, 23)}000Z`;
    if (typeof value === "string" && types.get(column) === "timestamp with time zone") return parseInstant(value) ?? value;
    return typeof value === "string" ? value : JSON.stringify(value);
  };
  const byKey = new Map<string, Record<string, unknown>>();
  // Merged rows are copies made here, so the caller's rows are never changed; a key met many times
  // (the email sequence every schedule of a page carries) is merged into its one copy.
  const copies = new Set<Record<string, unknown>>();
  for (const row of rows as readonly Record<string, unknown>[]) {
    const text = key.length === 1 ? part(key[0] as string, row[key[0] as string]) : key.map((column) => part(column, row[column])).join("\u0000");
    const earlier = byKey.get(text);
    if (earlier === undefined) {
      byKey.set(text, row);
      continue;
    }
    let merged = earlier;
    if (!copies.has(merged)) {
      merged = { ...earlier };
      copies.add(merged);
      byKey.set(text, merged);
    }
    for (const column in row) if (row[column] !== undefined) merged[column] = row[column];
  }
  return byKey.size === rows.length ? rows : [...byKey.values()];
}

export interface ColumnGroup {
  columns: string[];
  rows: object[];
}

/**
 * Rows grouped by the columns they carry. Nearly every call has one group, so
 * each row is first checked against the first row's columns by counting,
 * without building a column list per row.
 */
export function groupByColumns(table: SyncedTableName, rows: readonly object[]): ColumnGroup[] {
  const base: ColumnGroup = { columns: definedColumns(rows[0] as Record<string, unknown>), rows: [] };
  const groups = new Map<string, ColumnGroup>([[base.columns.join(","), base]]);
  for (const row of rows as readonly Record<string, unknown>[]) {
    if (hasExactly(row, base.columns)) {
      base.rows.push(row);
      continue;
    }
    const columns = definedColumns(row);
    const signature = columns.join(",");
    let group = groups.get(signature);
    if (group === undefined) groups.set(signature, (group = { columns, rows: [] }));
    group.rows.push(row);
  }
  for (const group of groups.values()) checkColumns(table, group.columns);
  return [...groups.values()].filter((group) => group.rows.length > 0);
}

function checkColumns(table: SyncedTableName, columns: readonly string[]): void {
  const forbidden = columns.filter((column) => UNWRITABLE_COLUMNS.has(column));
  if (forbidden.length > 0) throw new Error(`upsert into ${table}: ${forbidden.join(", ")} are written by the warehouse itself`);
  const missingKey = NATURAL_KEYS[table].filter((column) => !columns.includes(column));
  if (missingKey.length > 0) throw new Error(`upsert into ${table}: rows lack their natural key ${missingKey.join(", ")}`);
}

/** A column set to undefined counts as absent, as it would in JSON. */
function definedColumns(row: Record<string, unknown>): string[] {
  return Object.keys(row)
    .filter((column) => row[column] !== undefined)
    .sort();
}

/** Runs for every row of every call, so it counts instead of building a column list per row. */
function hasExactly(row: Record<string, unknown>, columns: readonly string[]): boolean {
  let defined = 0;
  for (const column in row) if (row[column] !== undefined) defined += 1;
  return defined === columns.length && columns.every((column) => row[column] !== undefined);
}
