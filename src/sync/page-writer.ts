import type { Kysely, Transaction } from "kysely";
import type { RejectedRecord } from "../upstream/client.ts";
import type { Database } from "../warehouse/database.ts";
import type { RowInput, SyncedTableName } from "../warehouse/tables.ts";
import { recordRejected, upsert } from "../warehouse/upsert.ts";
import type { SyncObserver } from "./context.ts";
import type { RowBatch, StreamDefinition, StreamScope } from "./stream.ts";

/**
 * Turns one page of records into warehouse rows and writes them, together
 * with the page's rejected records and whatever the caller adds (the
 * checkpoint), in one transaction.
 */

export interface PageWrite<R> {
  stream: StreamDefinition<R>;
  scope: StreamScope;
  records: readonly R[];
  rejected: readonly RejectedRecord[];
  runId: number;
  syncedAt: Date;
}

export interface WriteCounts {
  written: number;
  rejected: number;
}

const DEADLOCK_RETRIES = 5;
const RETRYABLE_SQLSTATES = new Set(["40P01", "40001"]);

/** The page's rows per table (upsert() keeps one per natural key, the last). */
export function rowsOf<R>(stream: StreamDefinition<R>, records: readonly R[], scope: StreamScope): RowBatch {
  const batch: Record<string, unknown[]> = {};
  for (const record of records) {
    for (const [table, rows] of Object.entries(stream.rows(record, scope))) {
      if (rows && rows.length > 0) (batch[table] ??= []).push(...rows);
    }
  }
  return batch as RowBatch;
}

/** Rows sorted by key, so concurrent transactions lock shared rows (contacts) in one order and cannot deadlock. */
function sortKey(row: Record<string, unknown>): string {
  const key = row.id ?? row.uid ?? `${String(row.schedule_id)}|${String(row.link ?? "")}|${String(row.clicked_on ?? row.opened_on ?? "")}`;
  return typeof key === "number" ? key.toString().padStart(12, "0") : String(key);
}

function sorted<T>(rows: readonly T[]): T[] {
  return [...rows].sort((left, right) => {
    const a = sortKey(left as Record<string, unknown>);
    const b = sortKey(right as Record<string, unknown>);
    return a < b ? -1 : a > b ? 1 : 0;
  });
}

export async function writeRows(
  trx: Transaction<Database>,
  batch: RowBatch,
  syncedAt: Date,
  observer?: SyncObserver,
): Promise<number> {
  let written = 0;
  const tables = Object.keys(batch).sort() as SyncedTableName[];
  for (const table of tables) {
    const rows = batch[table] as RowInput<typeof table>[] | undefined;
    if (!rows || rows.length === 0) continue;
    const result = await upsert(trx, table, sorted(rows), syncedAt);
    const count = result.inserted + result.updated;
    written += count;
    if (count > 0) observer?.onRowsWritten?.(table, count);
  }
  return written;
}

export async function writePage<R>(
  db: Kysely<Database>,
  write: PageWrite<R>,
  alsoInTransaction: (trx: Transaction<Database>) => Promise<void>,
  observer?: SyncObserver,
): Promise<WriteCounts> {
  const batch = rowsOf(write.stream, write.records, write.scope);
  return inTransaction(db, async (trx) => {
    const written = await writeRows(trx, batch, write.syncedAt, observer);
    if (write.rejected.length > 0) {
      await recordRejected(
        trx,
        write.rejected.map((rejected) => ({
          run_id: write.runId,
          account: write.scope.account,
          stream: rejected.stream,
          campaign_uid: write.scope.campaignUid,
          reason: rejected.reason,
          payload: rejected.payload,
        })),
        write.syncedAt,
      );
    }
    await alsoInTransaction(trx);
    return { written, rejected: write.rejected.length };
  });
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
