import { sql, type ExpressionOrFactory, type Kysely, type SqlBool, type Transaction } from "kysely";
import type { ReadRecord, RejectedRecord } from "../upstream/client.ts";
import { rejectedIdentity } from "../upstream/parsing.ts";
import type { Database } from "../warehouse/database.ts";
import { findMissing, markDeleted, markDeletedKeys, softDeleteWhere, type MissingRows } from "../warehouse/mark-deleted.ts";
import { arrayLiteral } from "../warehouse/array-literal.ts";
import { columnTypes, typeOf } from "../warehouse/column-arrays.ts";
import { NATURAL_KEYS, type SyncedTableName } from "../warehouse/tables.ts";
import { naturalKeyText } from "./natural-keys.ts";
import { sourceOf, type CascadeRule, type SoftDeleteRule, type StreamDefinition, type StreamScope } from "./stream.ts";

type Executor = Kysely<Database> | Transaction<Database>;

/**
 * What one complete read of a listing saw: the natural keys each soft-delete
 * rule vouches for, the records whose children could not be read (those
 * children are protected, not deleted), and how many distinct records it met,
 * placed or not, and how many copies of them one page repeated, to compare
 * with the upstream's total.
 *
 * A record that could not be placed still vouches for its row when the key
 * fields it kept are the row's whole natural key (a reply that lost its
 * schedule_id keeps its id); any other blocks the rule's soft-deletes, since
 * the row it would have matched cannot be told apart from one that is gone.
 */
export class WalkCoverage<R> {
  readonly #stream: StreamDefinition<R>;
  readonly #rules: SoftDeleteRule<R>[];
  readonly #keys: Map<string, Record<string, unknown>>[];
  /** Per rule: parents whose children's keys could not be read. */
  readonly #protectedParents: Set<string | number>[];
  /** Per rule: a record the rule cannot identify (unplaced, or whose children could not be read and that names no parent), so it deletes nothing. */
  readonly #blocked: boolean[];
  readonly #seen = new Set<string>();
  /** Per identity of a record that could not be placed: the most copies of it one page held (identical records, such as two opens of one schedule that both lost opened_on, differ in nothing else). */
  readonly #unplaced = new Map<string, number>();
  /**
   * Per key of a placed record: the most copies of it one page held, less one. A page is one answer, so a key it
   * lists twice is the upstream's duplicate, not a record that moved between requests; across pages it could be.
   */
  readonly #repeats = new Map<string, number>();
  /** Per table whose missing rows the stream confirms: the keys confirmed gone (settle). */
  readonly #gone = new Map<SyncedTableName, Record<string, unknown>[]>();

  constructor(stream: StreamDefinition<R>) {
    this.#stream = stream;
    this.#rules = stream.softDelete ?? [];
    this.#keys = this.#rules.map(() => new Map());
    this.#protectedParents = this.#rules.map(() => new Set());
    this.#blocked = this.#rules.map(() => false);
  }

  add(records: readonly ReadRecord<R>[], rejected: readonly RejectedRecord[] = []): void {
    const listed = new Map<string, number>();
    for (const record of records) {
      const key = this.#stream.key(record.value);
      this.#seen.add(key);
      listed.set(key, (listed.get(key) ?? 0) + 1);
    }
    for (const [key, count] of listed) if (count > 1) this.#repeats.set(key, Math.max(count - 1, this.#repeats.get(key) ?? 0));
    const copies = new Map<string, number>();
    for (const record of rejected) {
      const identity = rejectedIdentity(record);
      copies.set(identity, (copies.get(identity) ?? 0) + 1);
    }
    for (const [identity, count] of copies) this.#unplaced.set(identity, Math.max(count, this.#unplaced.get(identity) ?? 0));
    this.#rules.forEach((rule, index) => {
      const keys = this.#keys[index] as Map<string, Record<string, unknown>>;
      for (const record of rejected) {
        const key = wholeKey(rule.table, record.readableKey);
        if (key) keys.set(naturalKeyText(rule.table, key), key);
        else this.#blocked[index] = true;
      }
      for (const { value } of records) {
        const vouched = rule.keys(value);
        if (vouched === null) {
          if (rule.parent) (this.#protectedParents[index] as Set<string | number>).add(rule.parent.of(value));
          else this.#blocked[index] = true;
          continue;
        }
        for (const key of vouched) keys.set(naturalKeyText(rule.table, key), key);
      }
    });
  }

  clear(): void {
    for (const keys of this.#keys) keys.clear();
    for (const parents of this.#protectedParents) parents.clear();
    this.#blocked.fill(false);
    this.#seen.clear();
    this.#unplaced.clear();
    this.#repeats.clear();
    this.#gone.clear();
  }

  /** Whether the read met the placed record with this key (walk.ts: records that arrive before a page's anchor). */
  hasRead(key: string): boolean {
    return this.#seen.has(key);
  }

  /** Whether the read met the record that could not be placed with this identity (rejectedIdentity). */
  hasMetUnplaced(identity: string): boolean {
    return this.#unplaced.has(identity);
  }

  /** The keys of the placed records met. */
  get readKeys(): ReadonlySet<string> {
    return this.#seen;
  }

  /** Distinct records met that could not be placed (by rejectedIdentity). */
  get unplacedRecords(): number {
    return this.#unplaced.size;
  }

  /** Distinct records met, placed or not. */
  get distinct(): number {
    let unplaced = 0;
    for (const count of this.#unplaced.values()) unplaced += count;
    return this.#seen.size + unplaced;
  }

  /** Copies of placed records beyond the first that one page held: positions read, though they add no record. */
  get repeated(): number {
    let repeated = 0;
    for (const count of this.#repeats.values()) repeated += count;
    return repeated;
  }

  /**
   * Soft-deletes, within the scope, every row the read did not vouch for, and what hangs from the deleted records.
   * With `readStartedAt`, a row another read observed since then is not this read's to judge (markDeleted).
   * A rule whose rows the stream confirms (confirmMissing) deletes only the rows settle() confirmed gone.
   */
  async markMissing(db: Executor, scope: StreamScope, at: Date, readStartedAt?: Date): Promise<void> {
    const deleted = new Map<SyncedTableName, number>();
    for (const [index, rule] of this.#rules.entries()) {
      if (this.#blocked[index]) continue;
      // Rules are data typed per stream; the warehouse checks table, scope and key columns at run time.
      const marked = this.#confirms(rule)
        ? await markDeletedKeys(db, rule.table, rule.within(scope) as never, (this.#gone.get(rule.table) ?? []) as never[], at, readStartedAt)
        : await this.#markUnseen(db, index, scope, at, readStartedAt);
      deleted.set(rule.table, (deleted.get(rule.table) ?? 0) + marked);
    }
    await this.#cascade(db, scope, at, deleted, readStartedAt);
  }

  /**
   * For a read that cannot prove it saw every record (a listing without a total, or whose pages announced none
   * usable, read through from the start): the rows it did not see, judged as markMissing judges them, are soft-deleted only when `previouslyMissing` (the previous such
   * walk's answer) lists them too, with what hangs from them; a rule whose rows the stream confirms deletes only
   * the rows settle() confirmed gone (confirmMissing asked only about those the previous walk lacked too).
   * Returns the rows (`table:key`) the next walk is to judge again: those left out and not deleted, and, for a
   * rule this walk cannot judge, those the previous walk lacked.
   */
  async markMissingAgain(db: Executor, scope: StreamScope, at: Date, readStartedAt: Date, previouslyMissing: readonly string[]): Promise<string[]> {
    const before = new Set(previouslyMissing);
    const toJudge: string[] = [];
    const deleted = new Map<SyncedTableName, number>();
    for (const [index, rule] of this.#rules.entries()) {
      const named = (key: Record<string, unknown>) => `${rule.table}:${naturalKeyText(rule.table, key)}`;
      if (this.#blocked[index]) {
        toJudge.push(...previouslyMissing.filter((text) => text.startsWith(`${rule.table}:`)));
        continue;
      }
      const missing = await findMissing(db, rule.table, { scope: rule.within(scope) as never, ...this.#unseen(index, readStartedAt) });
      const gone = new Set(this.#confirms(rule) ? (this.#gone.get(rule.table) ?? []).map(named) : missing.map(named).filter((text) => before.has(text)));
      const goneKeys = missing.filter((key) => gone.has(named(key)));
      toJudge.push(...missing.map(named).filter((text) => !gone.has(text)));
      const marked = await markDeletedKeys(db, rule.table, rule.within(scope) as never, goneKeys as never[], at, readStartedAt);
      deleted.set(rule.table, (deleted.get(rule.table) ?? 0) + marked);
    }
    await this.#cascade(db, scope, at, deleted, readStartedAt);
    return toJudge;
  }

  /** The keys of the rows of `table` that markMissing would soft-delete were they not confirmed: none when its rule is blocked. */
  async missing(db: Executor, scope: StreamScope, table: SyncedTableName, readStartedAt: Date): Promise<Record<string, unknown>[]> {
    const index = this.#rules.findIndex((rule) => rule.table === table);
    const rule = this.#rules[index];
    if (rule === undefined || this.#blocked[index]) return [];
    return findMissing(db, rule.table, { scope: rule.within(scope) as never, ...this.#unseen(index, readStartedAt) });
  }

  /**
   * What the lookups of the rows of `table` the read did not see found: `gone` are soft-deleted by markMissing,
   * any other stays live, and `kept` (rows neither confirmed gone nor written since) keep the rows of other
   * rules that hang from them live too, as the children of a record whose list of them could not be read.
   */
  settle(table: SyncedTableName, gone: readonly Record<string, unknown>[], kept: readonly (string | number)[]): void {
    this.#gone.set(table, [...gone]);
    this.#rules.forEach((rule, index) => {
      if (rule.parent && rule.table !== table) for (const key of kept) (this.#protectedParents[index] as Set<string | number>).add(key);
    });
  }

  /**
   * Soft-deletes what hangs from the rows this read deleted (`deleted`: per table, how many). A cascade's rows count
   * as deleted by this read for the cascades after it (a lead's schedules, then their events).
   */
  async #cascade(db: Executor, scope: StreamScope, at: Date, deleted: Map<SyncedTableName, number>, observedAt: Date | undefined): Promise<void> {
    for (const cascade of this.#stream.cascade ?? []) {
      const parents = this.#rules.find((rule) => rule.table === cascade.from);
      // Only what this read deleted (nearly always nothing, and then no query): children of parents deleted
      // before were cascaded then, and one a listing brought back since (a reply of a deleted schedule) is
      // live by that listing's word.
      if (!parents || (deleted.get(cascade.from) ?? 0) === 0) continue;
      const marked = await cascadeDeletes(db, cascade, { ...parents.within(scope), _deleted_at: at }, at, observedAt);
      for (const [table, count] of marked) deleted.set(table, (deleted.get(table) ?? 0) + count);
    }
  }

  #confirms(rule: SoftDeleteRule<R>): boolean {
    return this.#stream.kind === "paged" && this.#stream.confirmMissing?.table === rule.table;
  }

  async #markUnseen(db: Executor, index: number, scope: StreamScope, at: Date, readStartedAt: Date | undefined): Promise<number> {
    const rule = this.#rules[index] as SoftDeleteRule<R>;
    const { keepKeys, protectedRows, observedBefore } = this.#unseen(index, readStartedAt);
    return markDeleted(db, rule.table, rule.within(scope) as never, keepKeys, at, protectedRows, observedBefore);
  }

  /** For rule `index`: the keys the read vouched for, and the rows it may not judge. */
  #unseen(index: number, readStartedAt: Date | undefined): Omit<MissingRows<never>, "scope"> {
    const rule = this.#rules[index] as SoftDeleteRule<R>;
    const parents = this.#protectedParents[index] as Set<string | number>;
    return {
      keepKeys: [...(this.#keys[index] as Map<string, Record<string, unknown>>).values()] as never[],
      protectedRows: rule.parent && parents.size > 0 ? { column: rule.parent.column, values: [...parents] } : undefined,
      observedBefore: readStartedAt,
    };
  }

  /** Rejected records of this stream and scope that this read no longer met are resolved (fixed or gone upstream). */
  async resolveRejected(db: Executor, scope: StreamScope, readStartedAt: Date, at: Date): Promise<void> {
    await resolveRejectedBefore(db, scope, sourceOf(this.#stream), readStartedAt, at);
  }
}

/** The natural key of a row of `table` out of an unplaced record's readable key fields, when they hold all of it. */
function wholeKey(table: SyncedTableName, readableKey: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> | undefined {
  if (!readableKey) return undefined;
  const columns = NATURAL_KEYS[table];
  return columns.every((column) => column in readableKey) ? Object.fromEntries(columns.map((column) => [column, readableKey[column]])) : undefined;
}

/** Which of a stream's rejected records in a scope a read settles, when not all of them. */
export type RejectedOf = ExpressionOrFactory<Database, "rejected_records", SqlBool>;

/**
 * Resolves the rejected records kept under `stream` (sourceOf) in the scope, or only those `which` names, that
 * were last met before `readStartedAt`.
 */
export async function resolveRejectedBefore(db: Executor, scope: StreamScope, stream: string, readStartedAt: Date, at: Date, which?: RejectedOf): Promise<void> {
  let query = db
    .updateTable("rejected_records")
    .set({ resolved_at: at })
    .where("account", "=", scope.account)
    .where("stream", "=", stream)
    .where("campaign_uid", scope.campaignUid === null ? "is" : "=", scope.campaignUid)
    .where("resolved_at", "is", null)
    .where("last_seen_at", "<", readStartedAt);
  if (which !== undefined) query = query.where(which);
  await query.execute();
}

/**
 * Soft-deletes the live rows that hang from soft-deleted rows of
 * `cascade.from` within `parentFilter` (a campaign that vanished takes its
 * leads, schedules and events with it). They come back with their parent's
 * next sync.
 *
 * The parents' keys are read first: nearly always there are none, and the
 * children are then found through their index on the parent's key, instead of
 * a join that reads every child row of the warehouse. Returns how many rows
 * of each child table it marked.
 */
export async function cascadeDeletes(
  db: Executor,
  cascade: CascadeRule,
  parentFilter: Record<string, unknown>,
  at: Date,
  observedAt?: Date,
): Promise<Map<SyncedTableName, number>> {
  const marked = new Map<SyncedTableName, number>();
  const parentKey = NATURAL_KEYS[cascade.from][0] as string;
  let parents = db.selectFrom(cascade.from).select(sql.ref(parentKey).as("key")).where(sql.ref("_deleted_at"), "is not", null);
  for (const [column, value] of Object.entries(parentFilter)) parents = parents.where(sql.ref(column), "=", value);
  const keys = (await parents.execute()).map((row) => (row as { key: string | number }).key);
  if (keys.length === 0) return marked;
  for (const child of cascade.children) {
    const type = typeOf(await columnTypes(db, child.table), child.table, child.column);
    const hanging = sql`t._deleted_at IS NULL AND t.${sql.id(child.column)} = ANY(CAST(${arrayLiteral(keys, false)} AS ${sql.raw(type)}[]))`;
    marked.set(child.table, (marked.get(child.table) ?? 0) + (await softDeleteWhere(db, child.table, at, hanging, observedAt)));
  }
  if (cascade.checkpointsUnder !== undefined) {
    await sql`
      DELETE FROM sync_checkpoints WHERE ${sql.ref(cascade.checkpointsUnder)} = ANY(CAST(${arrayLiteral(keys.map(String), false)} AS text[]))`.execute(db);
  }
  if (cascade.rejectedUnder !== undefined) {
    await sql`
      UPDATE rejected_records SET resolved_at = CAST(${at} AS timestamptz)
       WHERE resolved_at IS NULL AND ${sql.ref(cascade.rejectedUnder)} = ANY(CAST(${arrayLiteral(keys.map(String), false)} AS text[]))`.execute(db);
  }
  return marked;
}
