import { sql, type DeleteResult, type Kysely } from "kysely";
import type { Database } from "../warehouse/database.ts";

/**
 * The retention of the run log. `sync_runs` and `verifications` are the log of
 * how the warehouse was made, one row per run: a started campaign's events
 * rhythm alone writes one a minute, so an account of a hundred campaigns logs
 * 144,000 runs a day. `coldsync prune` and the worker's retention job delete
 * the rows that finished before COLDSYNC_RUN_RETENTION, in short batches.
 * The archive itself (synced tables, their history, rejected_records) is never
 * pruned.
 *
 * Kept whatever their age: a run still running; a run a checkpoint names as
 * the last that moved it, or a record still rejected as the last that met it
 * (those references would turn NULL); the newest verification of each scope
 * (the account, a campaign), which /metrics and the status page show.
 */

export interface PruneOptions {
  /** Rows per statement: each is a transaction of its own, so runs writing their rows never wait long on one. */
  batchSize?: number;
  /** Counts what would be deleted, deleting nothing. */
  dryRun?: boolean;
  /** Checked between batches (the worker's shutdown). */
  signal?: AbortSignal;
}

export interface PruneResult {
  /** Rows that finished before this instant were pruned. */
  before: Date;
  syncRuns: number;
  verifications: number;
}

const DEFAULT_BATCH_SIZE = 5_000;

type Db = Kysely<Database>;

function prunableRuns(db: Db, account: string, before: Date) {
  return db
    .selectFrom("sync_runs as r")
    .select("r.id")
    .where("r.account", "=", account)
    // A running run has no finished_at, so it never compares.
    .where("r.finished_at", "<", before)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom("sync_checkpoints as c").select(sql.lit(1).as("one")).whereRef("c.last_run_id", "=", "r.id"))),
    )
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom("rejected_records as j").select(sql.lit(1).as("one")).whereRef("j.run_id", "=", "r.id").where("j.resolved_at", "is", null))),
    );
}

function prunableVerifications(db: Db, account: string, before: Date) {
  return db
    .selectFrom("verifications as v")
    .select("v.id")
    .where("v.account", "=", account)
    .where("v.finished_at", "<", before)
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom("verifications as newer")
          .select(sql.lit(1).as("one"))
          .whereRef("newer.account", "=", "v.account")
          .where(sql<boolean>`newer.campaign_uid IS NOT DISTINCT FROM v.campaign_uid`)
          .where(sql<boolean>`(newer.finished_at, newer.id) > (v.finished_at, v.id)`),
      ),
    );
}

/** Runs `batch` until one deletes fewer than `batchSize` rows; another pruner's rows are skipped, not waited for. */
async function deleteInBatches(batch: () => Promise<DeleteResult>, batchSize: number, signal: AbortSignal | undefined): Promise<number> {
  let deleted = 0;
  for (;;) {
    signal?.throwIfAborted();
    const count = Number((await batch()).numDeletedRows);
    deleted += count;
    if (count < batchSize) return deleted;
  }
}

async function countOf(db: Db, query: ReturnType<typeof prunableRuns> | ReturnType<typeof prunableVerifications>): Promise<number> {
  const row = await db
    .selectFrom(query.as("prunable"))
    .select((eb) => eb.fn.countAll<string>().as("rows"))
    .executeTakeFirstOrThrow();
  return Number(row.rows);
}

/** Deletes (or with `dryRun` counts) the account's run log that finished before `before`, but for what is kept. */
export async function pruneRunLog(db: Db, account: string, before: Date, options: PruneOptions = {}): Promise<PruneResult> {
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  if (options.dryRun) {
    return { before, syncRuns: await countOf(db, prunableRuns(db, account, before)), verifications: await countOf(db, prunableVerifications(db, account, before)) };
  }
  const oldestRuns = () => prunableRuns(db, account, before).orderBy("r.finished_at").limit(batchSize).forUpdate().skipLocked();
  const oldestVerifications = () => prunableVerifications(db, account, before).orderBy("v.finished_at").limit(batchSize).forUpdate().skipLocked();
  const syncRuns = await deleteInBatches(() => db.deleteFrom("sync_runs").where("id", "in", oldestRuns()).executeTakeFirst(), batchSize, options.signal);
  const verifications = await deleteInBatches(
    () => db.deleteFrom("verifications").where("id", "in", oldestVerifications()).executeTakeFirst(),
    batchSize,
    options.signal,
  );
  return { before, syncRuns, verifications };
}
