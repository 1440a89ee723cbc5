import { setImmediate as nextTurn } from "node:timers/promises";
import { sql, type Kysely, type QueryResult, type RawBuilder, type Transaction } from "kysely";
import { arrayLiteral } from "./array-literal.ts";
import type { Database } from "./database.ts";
import { NATURAL_KEYS, UNWRITABLE_COLUMNS, type NaturalKey, type RowInput, type SyncedTableName } from "./tables.ts";

/**
 * Writing synced rows (contract B).
 *
 * Each chunk of rows travels as one typed array per column and is unpacked
 * with unnest(): one parameter per column whatever the chunk size, so no
 * parameter limit, and (measured on 100,000 rows) a third faster than the same
 * statement fed by jsonb_populate_recordset and well ahead of multi-row VALUES.
 * The array types are read from the catalog once per table. While the
 * database writes one chunk, the next chunk's arrays are being built.
 *
 * Rows may be partial: only the columns present are inserted or updated, which
 * is how two sources of one table merge without nulling each other's fields.
 * An upsert that changes nothing writes nothing: the conflict update is guarded
 * by IS DISTINCT FROM, so an unchanged replay creates no new tuple.
 */

type Executor = Kysely<Database> | Transaction<Database>;

/** Rows per statement: large enough to amortise a round trip, small enough to keep one statement's memory modest. */
const ROWS_PER_STATEMENT = 5_000;

/**
 * Columns that one source knows and another does not send as a value:
 * a link-click listing row (no id) must never clear the id a schedule's copy gave.
 */
const KEEP_KNOWN: { [T in SyncedTableName]?: readonly string[] } = { link_clicks: ["id"] };

export interface UpsertResult {
  inserted: number;
  updated: number;
}

export async function upsert<T extends SyncedTableName>(
  db: Executor,
  table: T,
  rows: readonly RowInput<T>[],
  syncedAt: Date,
): Promise<UpsertResult> {
  if (rows.length === 0) return { inserted: 0, updated: 0 };
  const columns = columnsOf(table, rows);
  const types = await columnTypes(db, table);
  const statement = upsertStatement(table, columns, types);
  const unique = lastPerKey(table, rows, types);
  const literalsFrom = (start: number) => columnLiterals(unique.slice(start, start + ROWS_PER_STATEMENT), columns, types);
  const nextChunk = async (start: number): Promise<string[] | undefined> => {
    if (start >= unique.length) return undefined;
    await nextTurn(); // lets the driver send the running statement first
    return literalsFrom(start);
  };
  const total = { inserted: 0, updated: 0 };
  let literals: string[] | undefined = literalsFrom(0);
  for (let start = 0; literals !== undefined; start += ROWS_PER_STATEMENT) {
    const running: Promise<QueryResult<UpsertResult>> = statement(literals, syncedAt).execute(db);
    const [result, next] = await Promise.all([running, nextChunk(start + ROWS_PER_STATEMENT)]);
    total.inserted += result.rows[0]?.inserted ?? 0;
    total.updated += result.rows[0]?.updated ?? 0;
    literals = next;
  }
  return total;
}

/**
 * One row per natural key, the last occurrence winning: a statement that met a
 * key twice would fail ("cannot affect row a second time"). Keys are compared
 * as PostgreSQL will: a timestamptz given as a Date or as text is one instant.
 */
function lastPerKey<R extends object>(table: SyncedTableName, rows: readonly R[], types: ColumnTypes): readonly R[] {
  const key: readonly string[] = NATURAL_KEYS[table];
  const part = (column: string, value: unknown): string => {
    if (value instanceof Date) return String(value.getTime());
    if (typeof value === "string" && types.get(column) === "timestamp with time zone") {
      const instant = Date.parse(value);
      if (!Number.isNaN(instant)) return String(instant);
    }
    return typeof value === "string" ? value : JSON.stringify(value);
  };
  const byKey = new Map<string, R>();
  for (const row of rows) {
    const record = row as Record<string, unknown>;
    byKey.set(key.map((column) => part(column, record[column])).join("\u0000"), row);
  }
  return byKey.size === rows.length ? rows : [...byKey.values()];
}

/** The columns every row of one call provides; a call mixing column sets is a bug in its caller. */
function columnsOf(table: SyncedTableName, rows: readonly object[]): string[] {
  const columns = definedColumns(rows[0] as Record<string, unknown>);
  for (const row of rows as readonly Record<string, unknown>[]) {
    if (!hasExactly(row, columns)) {
      throw new Error(`upsert into ${table}: every row of one call must have the same columns (${columns.join(",")}), got (${definedColumns(row).join(",")})`);
    }
  }
  const forbidden = columns.filter((column) => UNWRITABLE_COLUMNS.has(column));
  if (forbidden.length > 0) throw new Error(`upsert into ${table}: ${forbidden.join(", ")} are written by the warehouse itself`);
  const missingKey = NATURAL_KEYS[table].filter((column) => !columns.includes(column));
  if (missingKey.length > 0) throw new Error(`upsert into ${table}: rows lack their natural key ${missingKey.join(", ")}`);
  return columns;
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

type ColumnTypes = ReadonlyMap<string, string>;

/**
 * SQL types of a table's columns, as the migrations made them. Every warehouse
 * a process opens runs the same migrations, so one lookup per table serves all.
 */
const columnTypeCache = new Map<string, ColumnTypes>();

async function columnTypes(db: Executor, table: SyncedTableName): Promise<ColumnTypes> {
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

function typeOf(types: ColumnTypes, table: SyncedTableName, column: string): string {
  const type = types.get(column);
  if (type === undefined) throw new Error(`${table} has no column ${column}`);
  return type;
}

/** Each column of a chunk as one array literal. */
function columnLiterals(rows: readonly object[], columns: readonly string[], types: ColumnTypes): string[] {
  const records = rows as readonly Record<string, unknown>[];
  return columns.map((column) =>
    arrayLiteral(
      records.map((row) => row[column]),
      types.get(column) === "jsonb",
    ),
  );
}

function typedArrays(table: SyncedTableName, columns: readonly string[], types: ColumnTypes, literals: readonly string[]) {
  return sql.join(columns.map((column, index) => sql`CAST(${literals[index]} AS ${sql.raw(typeOf(types, table, column))}[])`));
}

function upsertStatement(table: SyncedTableName, columns: readonly string[], types: ColumnTypes) {
  const key: readonly string[] = NATURAL_KEYS[table];
  const keepKnown = KEEP_KNOWN[table] ?? [];
  const target = sql.id(table);
  const list = (names: readonly string[], prefix?: string) =>
    sql.join(names.map((name) => (prefix === undefined ? sql.id(name) : sql.id(prefix, name))));
  const newValue = (column: string): RawBuilder<unknown> => {
    if (keepKnown.includes(column)) return sql`COALESCE(excluded.${sql.id(column)}, t.${sql.id(column)})`;
    // Unknown upstream fields from several sources accumulate instead of replacing each other.
    if (column === "_extra") return sql`CASE WHEN excluded._extra IS NULL THEN t._extra ELSE COALESCE(t._extra, '{}'::jsonb) || excluded._extra END`;
    return sql`excluded.${sql.id(column)}`;
  };
  const updated = columns.filter((column) => !key.includes(column));
  const assignments = sql.join([
    ...updated.map((column) => sql`${sql.id(column)} = ${newValue(column)}`),
    sql`_synced_at = excluded._synced_at`,
    sql`_deleted_at = NULL`,
  ]);
  const changed =
    updated.length === 0
      ? sql`t._deleted_at IS NOT NULL`
      : sql`(${list(updated, "t")}) IS DISTINCT FROM (${sql.join(updated.map(newValue))}) OR t._deleted_at IS NOT NULL`;

  // Rows arrive with one row per key (lastPerKey), so the input needs no sort to be conflict-free.
  return (literals: readonly string[], syncedAt: Date) => sql<UpsertResult>`
    WITH written AS (
      INSERT INTO ${target} AS t (${list(columns)}, _synced_at, _first_seen_at)
      SELECT ${list(columns)}, CAST(${syncedAt} AS timestamptz), CAST(${syncedAt} AS timestamptz)
        FROM unnest(${typedArrays(table, columns, types, literals)}) AS r(${list(columns)})
      ON CONFLICT (${list(key)}) DO UPDATE SET ${assignments}
      WHERE ${changed}
      RETURNING (xmax = 0) AS inserted
    )
    SELECT count(*) FILTER (WHERE inserted) AS inserted, count(*) FILTER (WHERE NOT inserted) AS updated FROM written`;
}

/**
 * Soft-deletes the live rows of `table` inside `scope` (column = value, e.g.
 * `{ campaign_uid }`) whose natural key is not among `keepKeys`. Rows are
 * never removed; an upsert of the same key later clears `_deleted_at`.
 */
export async function markDeleted<T extends SyncedTableName>(
  db: Executor,
  table: T,
  scope: Partial<RowInput<T>>,
  keepKeys: readonly NaturalKey<T>[],
  deletedAt: Date,
): Promise<number> {
  const key: readonly string[] = NATURAL_KEYS[table];
  const types = await columnTypes(db, table);
  const within = Object.entries(scope).map(([column, value]) => {
    if (value === null || value === undefined) throw new Error(`markDeleted on ${table}: scope column ${column} needs a value`);
    return sql`AND t.${sql.id(column)} = ${value}`;
  });
  const literals = columnLiterals(keepKeys, key, types);
  // NOT IN over a subquery runs as a hashed subplan, linear in rows + keys; NOT EXISTS over unnest()
  // was planned as a nested loop (the planner guesses 100 rows for a function), quadratic per campaign.
  // Natural keys are never null, so NOT IN's null semantics cannot bite.
  const { rows } = await sql<{ marked: number }>`
    WITH marked AS (
      UPDATE ${sql.id(table)} AS t SET _deleted_at = CAST(${deletedAt} AS timestamptz)
       WHERE t._deleted_at IS NULL
         ${sql.join(within, sql` `)}
         AND (${sql.join(key.map((column) => sql`t.${sql.id(column)}`))}) NOT IN (
           SELECT ${sql.join(key.map((column) => sql`k.${sql.id(column)}`))}
             FROM unnest(${typedArrays(table, key, types, literals)}) AS k(${sql.join(key.map((column) => sql.id(column)))})
         )
      RETURNING 1
    )
    SELECT count(*) AS marked FROM marked`.execute(db);
  return rows[0]?.marked ?? 0;
}

export interface RejectedRecordInput {
  run_id: number | null;
  account: string;
  stream: string;
  campaign_uid: string | null;
  reason: string;
  payload: unknown;
}

/**
 * Keeps records that failed validation, once per (account, stream, payload):
 * the hash is taken over jsonb's normal text form, so a replayed page (even
 * with keys in another order) bumps times_seen and last_seen_at instead of
 * adding a row. The latest run and reason win.
 */
export async function recordRejected(db: Executor, rows: readonly RejectedRecordInput[], at: Date): Promise<void> {
  if (rows.length === 0) return;
  const records = rows.map((row) => ({ ...row, payload: row.payload === undefined ? null : row.payload }));
  await sql`
    WITH input AS (
      SELECT r.run_id, r.account, r.stream, r.campaign_uid, r.reason,
             COALESCE(r.payload, 'null'::jsonb) AS payload,
             r.ordinality
        FROM jsonb_populate_recordset(NULL::rejected_records, CAST(${JSON.stringify(records)} AS jsonb)) WITH ORDINALITY AS r
    ),
    hashed AS (
      SELECT input.*, encode(sha256(convert_to(payload::text, 'UTF8')), 'hex') AS payload_sha256 FROM input
    ),
    grouped AS (
      SELECT DISTINCT ON (account, stream, payload_sha256)
             run_id, account, stream, campaign_uid, reason, payload, payload_sha256,
             count(*) OVER same_payload AS copies,
             min(ordinality) OVER same_payload AS first_position
        FROM hashed
      WINDOW same_payload AS (PARTITION BY account, stream, payload_sha256)
       ORDER BY account, stream, payload_sha256, ordinality DESC
    )
    INSERT INTO rejected_records AS t
      (run_id, account, stream, campaign_uid, reason, payload, payload_sha256, first_seen_at, last_seen_at, times_seen)
    SELECT run_id, account, stream, campaign_uid, reason, payload, payload_sha256,
           CAST(${at} AS timestamptz), CAST(${at} AS timestamptz), copies
      FROM grouped
     ORDER BY first_position
    ON CONFLICT (account, stream, payload_sha256) DO UPDATE
      SET last_seen_at = excluded.last_seen_at,
          times_seen = t.times_seen + excluded.times_seen,
          run_id = COALESCE(excluded.run_id, t.run_id),
          reason = excluded.reason`.execute(db);
}
