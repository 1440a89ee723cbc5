import type { Kysely, Transaction } from "kysely";
import { addStage, stageStart } from "../stage-timings.ts";
import type { ReadRecord, RejectedRecord } from "../upstream/client.ts";
import type { Database } from "../warehouse/database.ts";
import type { RowInput, SyncedTableName } from "../warehouse/tables.ts";
import { recordRejected, upsert } from "../warehouse/upsert.ts";
import { deleteChildrenAgain, lockCampaignOf } from "./campaign-children.ts";
import type { SyncContext } from "./context.ts";
import { sourceOf, type RowBatch, type RowContext, type StreamDefinition, type StreamScope } from "./stream.ts";
import type { WriteCounts } from "./stream-run.ts";

/**
 * Turns one page of records into warehouse rows and writes them, together
 * with the records and parts of records that could not be placed and whatever
 * the caller adds (the checkpoint), in one transaction.
 */

export interface PageWrite<R> {
  stream: StreamDefinition<R>;
  scope: StreamScope;
  records: readonly ReadRecord<R>[];
  /**
   * Positions in `records` of the ones an earlier page of the same walk, or an earlier walk of the same run,
   * brought already (a page's anchor, what moved before the cursor, what a walk that started over reads again):
   * written again as this newer answer has them, but their parts that cannot be placed and their field issues
   * were counted and set aside with that page.
   */
  alreadyRead?: ReadonlySet<number>;
  /** Records of the page that could not be placed, and that no earlier page (of the walk, or of the run's earlier walks) brought. */
  rejected: readonly RejectedRecord[];
  runId: number;
  /** When the request that got the page was sent. */
  observedAt: Date;
}

const DEADLOCK_RETRIES = 5;
const RETRYABLE_SQLSTATES = new Set(["40P01", "40001"]);
const NONE_READ: ReadonlySet<number> = new Set();

interface MappedPage {
  batch: RowBatch;
  /** The parts the records not `alreadyRead` could not place. */
  rejected: RejectedRecord[];
  /** Deviating fields per `table.field` (array positions as `*`), counted over the rows of the records not `alreadyRead`. */
  fieldIssues: Record<string, number>;
}

/**
 * The page's rows per table (upsert() keeps one per natural key, the last), and what the records not
 * `alreadyRead` could not place or read as documented.
 */
export function mapPage<R>(stream: StreamDefinition<R>, records: readonly ReadRecord<R>[], scope: StreamScope, observedAt: Date, alreadyRead = NONE_READ): MappedPage {
  const mappingStart = stageStart();
  const batch: Record<string, unknown[]> = {};
  const rejected: RejectedRecord[] = [];
  const fieldIssues: Record<string, number> = {};
  const source = sourceOf(stream);
  records.forEach((record, index) => {
    const before = alreadyRead.has(index);
    const reject: RowContext["reject"] = before ? setAsideBefore : (part) => rejected.push({ ...part, stream: source, parentKey: stream.key(record.value) });
    for (const [table, rows] of Object.entries(stream.rows(record, { scope, observedAt, reject }))) {
      if (!rows || rows.length === 0) continue;
      (batch[table] ??= []).push(...rows);
      if (!before) countFieldIssues(table, rows, fieldIssues);
    }
  });
  addStage("mapping", mappingStart);
  return { batch: batch as RowBatch, rejected, fieldIssues };
}

/** The parts of a record an earlier page brought were set aside with that page. */
function setAsideBefore(): void {}

/** Adds the deviating fields of `rows` of `table` to `counts`, per `table.field` (array positions as `*`). */
function countFieldIssues(table: string, rows: readonly { _field_issues?: unknown }[], counts: Record<string, number>): void {
  for (const row of rows) {
    const issues = row._field_issues as Record<string, unknown> | null | undefined;
    if (!issues) continue;
    for (const path of Object.keys(issues)) {
      const field = `${table}.${path.replace(/\.\d+(?=\.|$)/g, ".*")}`;
      counts[field] = (counts[field] ?? 0) + 1;
    }
  }
}

/** Rows sorted by key, so concurrent transactions lock shared rows (contacts) in one order and cannot deadlock. */
function sortKey(row: Record<string, unknown>): number | string {
  const key = row.id ?? row.uid ?? `${String(row.schedule_id)}|${String(row.link ?? "")}|${String(row.clicked_on ?? row.opened_on ?? "")}`;
  return typeof key === "number" ? key : String(key);
}

/** Numbers in numeric order, before any text; text in code-unit order. */
function compareKeys(left: number | string, right: number | string): number {
  if (typeof left === "number") return typeof right === "number" ? left - right : -1;
  if (typeof right === "number") return 1;
  return left < right ? -1 : left > right ? 1 : 0;
}

/** Each row's key is built once, not once per comparison. */
function sorted<T>(rows: readonly T[]): T[] {
  const keyed = rows.map((row) => ({ key: sortKey(row as Record<string, unknown>), row }));
  keyed.sort((left, right) => compareKeys(left.key, right.key));
  return keyed.map((entry) => entry.row);
}

/** Who wrote a batch: the name its field issues are kept under, and the tables it holds copies in. */
export interface BatchSource {
  name: string;
  copiesInto?: readonly SyncedTableName[];
}

/** Upserts a batch; answers the rows each table inserted or changed. */
export async function writeRows(trx: Transaction<Database>, batch: RowBatch, syncedAt: Date, source: BatchSource): Promise<Map<SyncedTableName, number>> {
  const written = new Map<SyncedTableName, number>();
  const tables = Object.keys(batch).sort() as SyncedTableName[];
  for (const table of tables) {
    const rows = batch[table] as RowInput<typeof table>[] | undefined;
    if (!rows || rows.length === 0) continue;
    const revive = !source.copiesInto?.includes(table);
    const sortStart = stageStart();
    const ordered = sorted(rows);
    addStage("sqlBuild", sortStart);
    const result = await upsert(trx, table, ordered, syncedAt, { source: source.name, revive });
    const count = result.inserted + result.updated;
    if (count > 0) written.set(table, count);
  }
  return written;
}

export async function writePage<R>(ctx: SyncContext, write: PageWrite<R>, alsoInTransaction: (trx: Transaction<Database>) => Promise<void>): Promise<WriteCounts> {
  const { stream, scope } = write;
  const { batch, rejected: parts, fieldIssues } = mapPage(stream, write.records, scope, write.observedAt, write.alreadyRead);
  const rejected = [...write.rejected.map((record) => ({ ...record, skipped: record.skipped ?? stream.childrenOf?.(record.payload) ?? 0 })), ...parts];
  const syncedAt = new Date();
  const { written, superseded } = await inTransaction(ctx.db, async (trx) => {
    const campaignDeletedAt = await lockCampaignOf(trx, stream, scope);
    const superseded = write.records.length > 0 && (await stream.supersededIn?.(trx, scope, write.observedAt)) === true;
    const written = superseded ? new Map<SyncedTableName, number>() : await writeRows(trx, batch, syncedAt, { name: sourceOf(stream), copiesInto: stream.copiesInto });
    await recordRejected(
      trx,
      rejected.map((record) => ({
        run_id: write.runId,
        account: scope.account,
        stream: record.stream,
        campaign_uid: scope.campaignUid,
        reason: record.reason,
        payload: record.payload,
        record_key: record.recordKey,
        key_identifies: record.keyIdentifies ?? false,
        parent_key: record.parentKey ?? null,
        skipped: record.skipped ?? 0,
      })),
      syncedAt,
    );
    // After the rejected records too: what the page set aside under a deleted campaign is resolved with it.
    if (campaignDeletedAt !== null && scope.campaignUid !== null) await deleteChildrenAgain(trx, scope.campaignUid, campaignDeletedAt);
    if (!superseded) await alsoInTransaction(trx);
    return { written, superseded };
  });
  // Counted once the page committed: a page that rolled back wrote nothing, and its retry counts what it writes.
  for (const [table, count] of written) ctx.observer?.onRowsWritten?.(table, count);
  for (const record of rejected) ctx.observer?.onRejected?.(record.stream);
  for (const [field, count] of Object.entries(fieldIssues)) ctx.observer?.onFieldIssues?.(stream.name, field, count);
  return { written: [...written.values()].reduce((sum, count) => sum + count, 0), rejected: rejected.length, skipped: rejected.reduce((sum, record) => sum + (record.skipped ?? 0), 0), fieldIssues, superseded };
}

/** Runs `work` in a transaction, retrying when PostgreSQL picked it as a deadlock or serialization victim. */
export async function inTransaction<T>(db: Kysely<Database>, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await db.transaction().execute(work);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (attempt >= DEADLOCK_RETRIES || code === undefined || !RETRYABLE_SQLSTATES.has(code)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 * attempt * Math.random()));
    }
  }
}
