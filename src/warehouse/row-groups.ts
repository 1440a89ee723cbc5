import { parseInstant } from "../upstream/instant.ts";
import type { ColumnTypes } from "./column-arrays.ts";
import { NATURAL_KEYS, UNWRITABLE_COLUMNS, type SyncedTableName } from "./tables.ts";

/**
 * The rows of one upsert call, made ready for its statements: one row per
 * natural key, then grouped by the columns they carry (upsert.ts says why).
 */

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
  for (const row of rows as readonly Record<string, unknown>[]) {
    const text = key.map((column) => part(column, row[column])).join("\u0000");
    const earlier = byKey.get(text);
    byKey.set(text, earlier === undefined ? row : { ...earlier, ...definedOnly(row) });
  }
  return byKey.size === rows.length ? rows : [...byKey.values()];
}

function definedOnly(row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).filter(([, value]) => value !== undefined));
}

export interface ColumnGroup {
  columns: string[];
  rows: object[];
  /** Columns some of the rows lack: the statement leaves them alone for those rows. */
  masked: string[];
}

/**
 * Rows grouped by the columns they carry. Nearly every call has one group, so
 * each row is first checked against the first row's columns by counting,
 * without building a column list per row.
 */
export function groupByColumns(table: SyncedTableName, rows: readonly object[], required: ReadonlySet<string>): ColumnGroup[] {
  const base: ColumnGroup = { columns: definedColumns(rows[0] as Record<string, unknown>), rows: [], masked: [] };
  const groups = new Map<string, ColumnGroup>([[base.columns.join(","), base]]);
  for (const row of rows as readonly Record<string, unknown>[]) {
    if (hasExactly(row, base.columns)) {
      base.rows.push(row);
      continue;
    }
    const columns = definedColumns(row);
    const signature = columns.join(",");
    let group = groups.get(signature);
    if (group === undefined) groups.set(signature, (group = { columns, rows: [], masked: [] }));
    group.rows.push(row);
  }
  for (const group of groups.values()) checkColumns(table, group.columns);
  return foldPartialRows(table, [...groups.values()].filter((group) => group.rows.length > 0), required);
}

/**
 * Groups that lack only data columns of the widest group (not keys, not the
 * warehouse's own `_` columns, which have rules of their own, and not NOT NULL
 * ones: the insert half of the statement would put NULL there) join it, with
 * those columns masked for their rows: one statement instead of one per
 * column set, which a drifting upstream would otherwise cost on most pages.
 */
function foldPartialRows(table: SyncedTableName, groups: ColumnGroup[], required: ReadonlySet<string>): ColumnGroup[] {
  if (groups.length < 2) return groups;
  const key: readonly string[] = NATURAL_KEYS[table];
  const widest = groups.reduce((best, group) => (group.columns.length > best.columns.length ? group : best));
  const masked = new Set<string>();
  const folded: ColumnGroup = { columns: widest.columns, rows: [...widest.rows], masked: [] };
  const others: ColumnGroup[] = [];
  for (const group of groups) {
    if (group === widest) continue;
    const missing = widest.columns.filter((column) => !group.columns.includes(column));
    const fits = group.columns.every((column) => widest.columns.includes(column)) && missing.every((column) => !key.includes(column) && !column.startsWith("_") && !required.has(column));
    if (!fits) {
      others.push(group);
      continue;
    }
    for (const column of missing) masked.add(column);
    folded.rows.push(...group.rows);
  }
  folded.masked = [...masked].sort();
  return [folded, ...others];
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
