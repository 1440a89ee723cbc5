import { sql } from "kysely";
import { arrayLiteral } from "./array-literal.ts";
import { columnLiterals, columnTypes, typedArrays, typeOf, type Executor } from "./column-arrays.ts";
import { NATURAL_KEYS, type NaturalKey, type RowInput, type SyncedTableName } from "./tables.ts";

/** Rows that must stay live whatever the keys say: those whose `column` holds one of `values` (children of a record whose list of them could not be read). */
export interface ProtectedRows {
  column: string;
  values: readonly (string | number)[];
}

/**
 * Soft-deletes the live rows of `table` inside `scope` (column = value, e.g.
 * `{ campaign_uid }`) whose natural key is not among `keepKeys`, except the
 * protected ones, and, with `observedBefore`, except the rows of a table that
 * orders its observations (`_observed_at`) that were observed at or after it:
 * another read (a lead's refresh beside its campaign's walk) saw them later
 * than the read that did not. Rows are never removed; an upsert of the same
 * key later clears `_deleted_at`.
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
  const key: readonly string[] = NATURAL_KEYS[table];
  const types = await columnTypes(db, table);
  const within = Object.entries(scope).map(([column, value]) => {
    if (value === null || value === undefined) throw new Error(`markDeleted on ${table}: scope column ${column} needs a value`);
    return sql`AND t.${sql.id(column)} = ${value}`;
  });
  if (protectedRows !== undefined && protectedRows.values.length > 0) {
    const type = typeOf(types, table, protectedRows.column);
    within.push(sql`AND t.${sql.id(protectedRows.column)} <> ALL (CAST(${arrayLiteral(protectedRows.values, false)} AS ${sql.raw(type)}[]))`);
  }
  if (observedBefore !== undefined && types.has("_observed_at")) within.push(sql`AND t._observed_at < CAST(${observedBefore} AS timestamptz)`);
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
