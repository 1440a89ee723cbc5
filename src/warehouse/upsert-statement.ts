import { CompiledQuery, sql, type RawBuilder } from "kysely";
import { typedArrays, type ColumnTypes, type Executor } from "./column-arrays.ts";
import { prepareOnce } from "./prepared-statements.ts";
import { NATURAL_KEYS, type SyncedTableName } from "./tables.ts";

/**
 * The SQL of an upsert (contract B): one INSERT … SELECT FROM unnest(one array
 * per column) … ON CONFLICT DO UPDATE per shape (table, columns, source),
 * guarded so that an unchanged row is not rewritten and an older observation
 * never overwrites a newer one. upsert.ts batches the rows it is given.
 */

export interface UpsertResult {
  inserted: number;
  updated: number;
}

/**
 * Columns that one source knows and another does not send as a value:
 * a link-click listing row (no id) must never clear the id a schedule's copy gave.
 */
export const KEEP_KNOWN: { [T in SyncedTableName]?: readonly string[] } = { link_clicks: ["id"] };

/**
 * Rows read by several requests at different moments, in jobs that do not
 * exclude each other: copies inside other records (a lead's schedules and
 * contact, migrations/0008), a lead (its listing and its lookup) and a reply
 * (its listing and its schedule's copy, migrations/0017). The newest read
 * decides, and `_observed_at` moves only when a read changes the row, so that
 * a walk whose reads match what is stored writes nothing.
 */
const OBSERVED_ON_CHANGE: ReadonlySet<SyncedTableName> = new Set(["schedules", "contacts", "leads", "replies"]);

/**
 * Columns of an OBSERVED_ON_CHANGE table that only one of its reads carries (a
 * reply's lead_uid comes from the copy, mail_from and subject from the
 * listing): no other read orders them, so their read writes them whenever it
 * lands, while the columns both carry follow the newest read.
 */
const ONE_SOURCE_COLUMNS: { [T in SyncedTableName]?: readonly string[] } = { replies: ["lead_uid", "mail_from", "subject"] };

/**
 * Rows that one source reads in part and another in full, in different jobs at
 * different moments (a campaign: the listing's summary, the detail's
 * everything; migrations/0009). `_observed_at` orders every observation of the
 * summary columns; a full read carries its own time as well, which orders the
 * other columns. So a detail read before a listing page and committed after it
 * still writes what the listing does not carry.
 */
const FULL_READS: { [T in SyncedTableName]?: { observedAt: string; summary: readonly string[]; observedWith: string } } = {
  // A detail whose status could not be read (left out of its row) observed no status: it must not order out a
  // listing page's status read before it and written after it. One that read the status did, whatever else it
  // missed. The other summary columns it wrote (the name) no older read writes back.
  campaigns: { observedAt: "_detail_observed_at", summary: ["_account", "name", "workspace_id", "created_on", "status"], observedWith: "status" },
};

const FIELD_ISSUES = "_field_issues";
const OBSERVED_AT = "_observed_at";

/** Stand-ins compiled where an execution's own values go: a column's array literal (by position), and the sync's instant. */
class LiteralSlot {
  constructor(readonly index: number) {}
}

const SYNCED_AT = Symbol("syncedAt");
/**
 * Shapes seen by one process: a few per table (which columns a source sends), more where an upstream's deviations
 * leave columns out of rows; the least recently used goes past COMPILED_SHAPES, and is compiled again if it returns.
 */
const compiledStatements = new Map<string, CompiledQuery<UpsertResult>>();
const COMPILED_SHAPES = 256;

/**
 * The upsert statement of one shape (table, columns, source), compiled once
 * and then only given each execution's parameters: building and compiling its
 * SQL for every page cost more CPU than the rows' array literals. PostgreSQL
 * prepares it once per connection too (prepared-statements.ts).
 */
export function compiledUpsert(db: Executor, table: SyncedTableName, columns: readonly string[], types: ColumnTypes, source: string, revive: boolean) {
  const shape = [table, source, revive, ...columns].join("\u0000");
  let compiled = compiledStatements.get(shape);
  if (compiled === undefined) {
    const slots = columns.map((_, index) => new LiteralSlot(index));
    compiled = upsertStatement(table, columns, types, source, revive)(slots, SYNCED_AT).compile(db);
    prepareOnce(compiled.sql, `${table}/${source}`);
    if (compiledStatements.size >= COMPILED_SHAPES) compiledStatements.delete(compiledStatements.keys().next().value as string);
  } else compiledStatements.delete(shape);
  // Kept in the order of use: the first key is the least recently used.
  compiledStatements.set(shape, compiled);
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
  // A full read moves the summary's observation only when it carries the column that stands for it (FULL_READS).
  const observesSummary = full === undefined || columns.includes(full.observedWith);
  const compared = columns.filter((column) => !key.includes(column) && !observations.includes(column));
  const summaryFresh = sql`excluded._observed_at >= t._observed_at`;
  const fullObservation = (row: "t" | "excluded") => sql.id(row, full?.observedAt ?? OBSERVED_AT);
  const fullFresh = sql`${fullObservation("excluded")} >= COALESCE(${fullObservation("t")}, '-infinity')`;
  // A full read that did not carry the column standing for the summary's observation (a detail whose status could
  // not be read) still wrote the other summary columns (the name): no read older than it may write them back.
  const newestSummaryRead = fullRead !== undefined && observed ? sql`GREATEST(t._observed_at, t.${sql.id(fullRead.observedAt)})` : undefined;
  const orderedByFullReadsToo = (column: string) =>
    newestSummaryRead !== undefined && fullRead?.summary.includes(column) === true && column !== fullRead.observedWith;
  const summaryFreshOf = (column: string) => (orderedByFullReadsToo(column) ? sql`excluded._observed_at >= ${newestSummaryRead}` : summaryFresh);
  const onChangeOnly = OBSERVED_ON_CHANGE.has(table);
  const oneSource = observed && onChangeOnly ? ONE_SOURCE_COLUMNS[table] : undefined;
  // Where columns follow different reads, each is written only if the read that orders it is the newest.
  const written = (column: string): RawBuilder<unknown> => {
    if (full !== undefined) return sql`CASE WHEN ${full.summary.includes(column) ? summaryFreshOf(column) : fullFresh} THEN ${newValue(column)} ELSE t.${sql.id(column)} END`;
    if (orderedByFullReadsToo(column)) return sql`CASE WHEN ${summaryFreshOf(column)} THEN ${newValue(column)} ELSE t.${sql.id(column)} END`;
    if (oneSource !== undefined && !oneSource.includes(column)) return sql`CASE WHEN ${summaryFresh} THEN ${newValue(column)} ELSE t.${sql.id(column)} END`;
    return newValue(column);
  };
  // A deletion moves the row's observation (mark-deleted.ts): only a read newer than it brings the row back.
  const revived = !revive ? sql`false` : observed ? sql`(${summaryFresh} AND t._deleted_at IS NOT NULL)` : sql`t._deleted_at IS NOT NULL`;
  const changed =
    compared.length === 0 ? revived : sql`((${list(compared, "t")}) IS DISTINCT FROM (${sql.join(compared.map(written))}) OR ${revived})`;
  const newest = (column: string) => sql`${sql.id(column)} = GREATEST(t.${sql.id(column)}, excluded.${sql.id(column)})`;
  const assignments = sql.join([
    ...compared.map((column) => sql`${sql.id(column)} = ${written(column)}`),
    ...(observed && !onChangeOnly
      ? [
          ...observations.filter((column) => column !== OBSERVED_AT || observesSummary).map(newest),
          sql`_synced_at = CASE WHEN ${changed} THEN excluded._synced_at ELSE t._synced_at END`,
        ]
      : [...(observed ? [newest(OBSERVED_AT)] : []), sql`_synced_at = excluded._synced_at`]),
    ...(revive ? [observed ? sql`_deleted_at = CASE WHEN ${summaryFresh} THEN NULL ELSE t._deleted_at END` : sql`_deleted_at = NULL`] : []),
  ]);
  // An observation older than the row's never wins; a newer one that changes nothing records that it was made,
  // except where the observation moves only with a change. Where columns follow different reads, `changed`
  // already holds only what the newest reads may write.
  const guard = !observed
    ? changed
    : onChangeOnly
      ? oneSource === undefined
        ? sql`${summaryFresh} AND ${changed}`
        : changed
      : full
        ? sql`(${summaryFresh} OR ${fullFresh}) AND (${changed} OR excluded._observed_at > t._observed_at OR ${fullObservation("excluded")} > COALESCE(${fullObservation("t")}, '-infinity'))`
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
