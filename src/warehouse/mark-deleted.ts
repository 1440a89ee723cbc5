import { sql, type RawBuilder } from "kysely";
import { arrayLiteral } from "./array-literal.ts";
import { columnLiterals, columnTypes, keyColumn, typedArrays, typeOf, type ColumnTypes, type Executor } from "./column-arrays.ts";
import { NATURAL_KEYS, type NaturalKey, type RowInput, type SyncedTableName } from "./tables.ts";

/** Rows that must stay live whatever the keys say: those whose `column` holds one of `values` (children of a record whose list of them could not be read). */
export interface ProtectedRows {
  column: string;
  values: readonly (string | number)[];
}

/** Which rows of `table` a read judges, and which of them it did not see. */
export interface MissingRows<T extends SyncedTableName> {
  /** Column values bounding the read, e.g. `{ campaign_uid }`. */
  scope: Partial<RowInput<T>>;
  /** Natural keys of the rows the read saw. */
  keepKeys: readonly NaturalKey<T>[];
  protectedRows?: ProtectedRows;
  /** Rows observed (`_observed_at`; in a table without it, written: `_synced_at`) at or after this were seen by another, later read. */
  observedBefore?: Date;
}

/**
 * Soft-deletes the live rows of `table` inside `scope` (column = value, e.g.
 * `{ campaign_uid }`) whose natural key is not among `keepKeys`, except the
 * protected ones, and, with `observedBefore`, except the rows observed at or
 * after it (`_observed_at`; written, `_synced_at`, in a table without it):
 * another read (a lead's refresh beside its campaign's walk) saw them later
 * than the read that did not. Rows are never removed; an upsert of the same
 * key later clears `_deleted_at`, if its read is newer than the deletion's
 * (softDeleteWhere).
 */
export async function markDeleted<T extends SyncedTableName>(
  db: Executor,
  table: T,
  scope: Partial<RowInput<T>>,
  keepKeys: readonly NaturalKey<T>[],
  deletedAt: Date,
  protectedRows?: ProtectedRows,
  observedBefore?: Date,
): Promise<number> {
  return softDeleteWhere(db, table, deletedAt, await missingCondition(db, table, { scope, keepKeys, protectedRows, observedBefore }), observedBefore);
}

/**
 * The natural keys of the rows markDeleted() would soft-delete: what a read that confirms its deletions asks
 * about first, or remembers until the next read. Instants come as canonical text (src/upstream/instant.ts), so
 * the keys compare with keys built from records and go back to markDeletedKeys to the microsecond.
 */
export async function findMissing<T extends SyncedTableName>(db: Executor, table: T, rows: MissingRows<T>): Promise<NaturalKey<T>[]> {
  const key: readonly string[] = NATURAL_KEYS[table];
  const types = await columnTypes(db, table);
  const missing = await missingCondition(db, table, rows);
  const selected = key.map((column) => sql`${keyColumn(types, column, "t")} AS ${sql.id(column)}`);
  const found = await sql<NaturalKey<T>>`
    SELECT ${sql.join(selected)} FROM ${sql.id(table)} AS t WHERE ${missing}
     ORDER BY ${sql.join(key.map((column) => sql`t.${sql.id(column)}`))}`.execute(db);
  return found.rows;
}

/**
 * Soft-deletes the live rows of `table` inside `scope` whose natural key is one of `keys` (nearly always none: then
 * no query); `observedAt`: when the read that found them gone started (softDeleteWhere).
 */
export async function markDeletedKeys<T extends SyncedTableName>(
  db: Executor,
  table: T,
  scope: Partial<RowInput<T>>,
  keys: readonly NaturalKey<T>[],
  deletedAt: Date,
  observedAt?: Date,
): Promise<number> {
  if (keys.length === 0) return 0;
  const types = await columnTypes(db, table);
  const listed = sql`t._deleted_at IS NULL
         ${sql.join(scopeConditions(table, scope), sql` `)}
         AND ${keyTuple(table)} IN (${keySet(table, types, keys)})`;
  return softDeleteWhere(db, table, deletedAt, listed, observedAt);
}

/**
 * Sets `_deleted_at` on the rows of `table` (aliased `t`) that `condition` selects; how many it marked. A deletion
 * is an observation too: in a table that orders its observations, `_observed_at` moves to `observedAt` (when the
 * read that found the rows gone started), so a read made before it and written after it does not bring them back.
 */
export async function softDeleteWhere(db: Executor, table: SyncedTableName, deletedAt: Date, condition: RawBuilder<unknown>, observedAt?: Date): Promise<number> {
  const observed = observedAt !== undefined && (await columnTypes(db, table)).has("_observed_at");
  const { rows } = await sql<{ marked: number }>`
    WITH marked AS (
      UPDATE ${sql.id(table)} AS t SET _deleted_at = CAST(${deletedAt} AS timestamptz)
        ${observed ? sql`, _observed_at = GREATEST(t._observed_at, CAST(${observedAt} AS timestamptz))` : sql``}
       WHERE ${condition} RETURNING 1
    )
    SELECT count(*) AS marked FROM marked`.execute(db);
  return rows[0]?.marked ?? 0;
}

/** The natural key columns of a row of `table` (aliased `t`), as one tuple. */
function keyTuple(table: SyncedTableName): RawBuilder<unknown> {
  return sql`(${sql.join(NATURAL_KEYS[table].map((column) => sql`t.${sql.id(column)}`))})`;
}

/** `keys` as rows of the natural key's columns, to compare with keyTuple(). */
function keySet<T extends SyncedTableName>(table: T, types: ColumnTypes, keys: readonly NaturalKey<T>[]): RawBuilder<unknown> {
  const key: readonly string[] = NATURAL_KEYS[table];
  return sql`SELECT ${sql.join(key.map((column) => sql`k.${sql.id(column)}`))}
             FROM unnest(${typedArrays(table, key, types, columnLiterals(keys, key, types))}) AS k(${sql.join(key.map((column) => sql.id(column)))})`;
}

function scopeConditions<T extends SyncedTableName>(table: T, scope: Partial<RowInput<T>>) {
  return Object.entries(scope).map(([column, value]) => {
    if (value === null || value === undefined) throw new Error(`soft-delete on ${table}: scope column ${column} needs a value`);
    return sql`AND t.${sql.id(column)} = ${value}`;
  });
}

/** The live rows of `table` (aliased `t`) in the scope that the read did not see and may judge. */
async function missingCondition<T extends SyncedTableName>(db: Executor, table: T, { scope, keepKeys, protectedRows, observedBefore }: MissingRows<T>) {
  const types = await columnTypes(db, table);
  const within = scopeConditions(table, scope);
  if (protectedRows !== undefined && protectedRows.values.length > 0) {
    const type = typeOf(types, table, protectedRows.column);
    within.push(sql`AND t.${sql.id(protectedRows.column)} <> ALL (CAST(${arrayLiteral(protectedRows.values, false)} AS ${sql.raw(type)}[]))`);
  }
  if (observedBefore !== undefined) {
    // A table without `_observed_at` that two reads write (a click: its listing, and a schedule's copy) spares the
    // rows written since instead: nothing but another read writes a row this read did not see.
    const seenSince = types.has("_observed_at") ? "_observed_at" : "_synced_at";
    within.push(sql`AND t.${sql.id(seenSince)} < CAST(${observedBefore} AS timestamptz)`);
  }
  // NOT IN over a subquery runs as a hashed subplan, linear in rows + keys; NOT EXISTS over unnest()
  // was planned as a nested loop (the planner guesses 100 rows for a function), quadratic per campaign.
  // Natural keys are never null, so NOT IN's null semantics cannot bite.
  return sql`t._deleted_at IS NULL
         ${sql.join(within, sql` `)}
         AND ${keyTuple(table)} NOT IN (${keySet(table, types, keepKeys)})`;
}
