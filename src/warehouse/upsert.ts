import { setImmediate as nextTurn } from "node:timers/promises";
import { CompiledQuery, sql, type QueryResult, type RawBuilder } from "kysely";
import { addStage, stageStart } from "../stage-timings.ts";
import { parseInstant } from "../upstream/instant.ts";
import { columnLiterals, columnTypes, typedArrays, type ColumnTypes, type Executor } from "./column-arrays.ts";
import { prepareOnce } from "./prepared-statements.ts";
import { NATURAL_KEYS, UNWRITABLE_COLUMNS, type RowInput, type SyncedTableName } from "./tables.ts";

export { markDeleted } from "./mark-deleted.ts";
export { recordRejected, type RejectedRecordInput } from "./rejected.ts";

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
 *   `_detail_observed_at`, which orders the columns only it reads (FULL_READS).
 */

/** Rows per statement: large enough to amortise a round trip, small enough to keep one statement's memory modest. */
const ROWS_PER_STATEMENT = 5_000;

/**
 * Columns that one source knows and another does not send as a value:
 * a link-click listing row (no id) must never clear the id a schedule's copy gave.
 */
const KEEP_KNOWN: { [T in SyncedTableName]?: readonly string[] } = { link_clicks: ["id"] };

/**
 * Rows that are copies inside other records (a lead's schedules and contact),
 * read by several requests at different moments: the newest copy decides, and
 * `_observed_at` moves only when a copy changes the row, so that a walk whose
 * copies match what is stored writes nothing (migrations/0008).
 */
const OBSERVED_ON_CHANGE: ReadonlySet<SyncedTableName> = new Set(["schedules", "contacts"]);

/**
 * Rows that one source reads in part and another in full, in different jobs at
 * different moments (a campaign: the listing's summary, the detail's
 * everything; migrations/0009). `_observed_at` orders every observation of the
 * summary columns; a full read carries its own time as well, which orders the
 * other columns. So a detail read before a listing page and committed after it
 * still writes what the listing does not carry.
 */
const FULL_READS: { [T in SyncedTableName]?: { observedAt: string; summary: readonly string[] } } = {
  campaigns: { observedAt: "_detail_observed_at", summary: ["_account", "name", "workspace_id", "created_on", "status"] },
};

const FIELD_ISSUES = "_field_issues";
const OBSERVED_AT = "_observed_at";

export interface UpsertResult {
  inserted: number;
  updated: number;
}

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
  if (columns.includes(FIELD_ISSUES) && options.source === undefined) throw new Error(`upsert into ${table}: rows with _field_issues need their source`);
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
function mergedPerKey(table: SyncedTableName, rows: readonly object[], types: ColumnTypes): readonly object[] {
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

interface ColumnGroup {
  columns: string[];
  rows: object[];
}

/**
 * Rows grouped by the columns they carry. Nearly every call has one group, so
 * each row is first checked against the first row's columns by counting,
 * without building a column list per row.
 */
function groupByColumns(table: SyncedTableName, rows: readonly object[]): ColumnGroup[] {
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

/** Stand-ins compiled where an execution's own values go: a column's array literal (by position), and the sync's instant. */
class LiteralSlot {
  constructor(readonly index: number) {}
}

const SYNCED_AT = Symbol("syncedAt");
/** Shapes seen by one process: a few per table (which columns a source sends), so the cache stays small. */
const compiledStatements = new Map<string, CompiledQuery<UpsertResult>>();

/**
 * The upsert statement of one shape (table, columns, source), compiled once
 * and then only given each execution's parameters: building and compiling its
 * SQL for every page cost more CPU than the rows' array literals. PostgreSQL
 * prepares it once per connection too (prepared-statements.ts).
 */
function compiledUpsert(db: Executor, table: SyncedTableName, columns: readonly string[], types: ColumnTypes, source: string, revive: boolean) {
  const shape = [table, source, revive, ...columns].join("\u0000");
  let compiled = compiledStatements.get(shape);
  if (compiled === undefined) {
    const slots = columns.map((_, index) => new LiteralSlot(index));
    compiled = upsertStatement(table, columns, types, source, revive)(slots, SYNCED_AT).compile(db);
    compiledStatements.set(shape, compiled);
    prepareOnce(compiled.sql);
  }
  const { sql: text, parameters } = compiled;
  return (literals: readonly string[], syncedAt: Date): CompiledQuery<UpsertResult> =>
    CompiledQuery.raw(
      text,
      parameters.map((parameter) => (parameter === SYNCED_AT ? syncedAt : parameter instanceof LiteralSlot ? literals[parameter.index] : parameter)),
    ) as CompiledQuery<UpsertResult>;
}

function upsertStatement(table: SyncedTableName, columns: readonly string[], types: ColumnTypes, source: string, revive: boolean) {
  const key: readonly string[] = NATURAL_KEYS[table];
  const keepKnown = KEEP_KNOWN[table] ?? [];
  const observed = columns.includes(OBSERVED_AT);
  const target = sql.id(table);
  const list = (names: readonly string[], prefix?: string) =>
    sql.join(names.map((name) => (prefix === undefined ? sql.id(name) : sql.id(prefix, name))));
  const newValue = (column: string): RawBuilder<unknown> => {
    if (keepKnown.includes(column)) return sql`COALESCE(excluded.${sql.id(column)}, t.${sql.id(column)})`;
    // Unknown upstream fields from several sources accumulate instead of replacing each other.
    if (column === "_extra") return sql`CASE WHEN excluded._extra IS NULL THEN t._extra ELSE COALESCE(t._extra, '{}'::jsonb) || excluded._extra END`;
    if (column === FIELD_ISSUES) {
      return sql`CASE WHEN excluded._field_issues IS NULL AND t._field_issues IS NULL THEN NULL
                      ELSE merge_field_issues(t._field_issues, excluded._field_issues -> ${source}, ${source}, excluded._synced_at) END`;
    }
    return sql`excluded.${sql.id(column)}`;
  };
  const fullRead = FULL_READS[table];
  const full = observed && fullRead !== undefined && columns.includes(fullRead.observedAt) ? fullRead : undefined;
  const observations = full === undefined ? [OBSERVED_AT] : [OBSERVED_AT, full.observedAt];
  const compared = columns.filter((column) => !key.includes(column) && !observations.includes(column));
  const summaryFresh = sql`excluded._observed_at >= t._observed_at`;
  const fullFresh = full && sql`excluded.${sql.id(full.observedAt)} >= COALESCE(t.${sql.id(full.observedAt)}, '-infinity')`;
  // In a full read, each column is written only if the observation that orders it is the newest.
  const written = (column: string): RawBuilder<unknown> => {
    if (full === undefined) return newValue(column);
    return sql`CASE WHEN ${full.summary.includes(column) ? summaryFresh : fullFresh} THEN ${newValue(column)} ELSE t.${sql.id(column)} END`;
  };
  const revived = !revive ? sql`false` : full ? sql`(${summaryFresh} AND t._deleted_at IS NOT NULL)` : sql`t._deleted_at IS NOT NULL`;
  const changed =
    compared.length === 0 ? revived : sql`((${list(compared, "t")}) IS DISTINCT FROM (${sql.join(compared.map(written))}) OR ${revived})`;
  const onChangeOnly = OBSERVED_ON_CHANGE.has(table);
  const newest = (column: string) => sql`${sql.id(column)} = GREATEST(t.${sql.id(column)}, excluded.${sql.id(column)})`;
  const assignments = sql.join([
    ...compared.map((column) => sql`${sql.id(column)} = ${written(column)}`),
    ...(observed && !onChangeOnly
      ? [...observations.map(newest), sql`_synced_at = CASE WHEN ${changed} THEN excluded._synced_at ELSE t._synced_at END`]
      : [...(observed ? [sql`_observed_at = excluded._observed_at`] : []), sql`_synced_at = excluded._synced_at`]),
    ...(revive ? [full ? sql`_deleted_at = CASE WHEN ${summaryFresh} THEN NULL ELSE t._deleted_at END` : sql`_deleted_at = NULL`] : []),
  ]);
  // An observation older than the row's never wins; a newer one that changes nothing records that it was made,
  // except on copies, whose observation moves only with a change.
  const guard = !observed
    ? changed
    : onChangeOnly
      ? sql`excluded._observed_at >= t._observed_at AND ${changed}`
      : full
        ? sql`(${summaryFresh} OR ${fullFresh}) AND (${changed} OR excluded._observed_at > t._observed_at OR ${sql.id("excluded", full.observedAt)} > COALESCE(${sql.id("t", full.observedAt)}, '-infinity'))`
        : sql`${summaryFresh} AND (${changed} OR excluded._observed_at > t._observed_at)`;

  // Rows arrive with one row per key (mergedPerKey), so the input needs no sort to be conflict-free.
  return (literals: readonly unknown[], syncedAt: unknown) => {
    // What the input row becomes on insert: a source's issues are stored under the source's name.
    const inserted = (column: string): RawBuilder<unknown> =>
      column === FIELD_ISSUES
        ? sql`CASE WHEN r._field_issues IS NULL THEN NULL ELSE merge_field_issues(NULL, r._field_issues, ${source}, CAST(${syncedAt} AS timestamptz)) END`
        : sql`r.${sql.id(column)}`;
    return sql<UpsertResult>`
    WITH written AS (
      INSERT INTO ${target} AS t (${list(columns)}, _synced_at, _first_seen_at)
      SELECT ${sql.join(columns.map(inserted))}, CAST(${syncedAt} AS timestamptz), CAST(${syncedAt} AS timestamptz)
        FROM unnest(${typedArrays(table, columns, types, literals)}) AS r(${list(columns)})
      ON CONFLICT (${list(key)}) DO UPDATE SET ${assignments}
      WHERE ${guard}
      RETURNING (xmax = 0) AS inserted, t._synced_at = CAST(${syncedAt} AS timestamptz) AS changed
    )
    SELECT count(*) FILTER (WHERE inserted) AS inserted, count(*) FILTER (WHERE changed AND NOT inserted) AS updated FROM written`;
  };
}
