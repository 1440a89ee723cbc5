import { sql, type Kysely } from "kysely";

/**
 * Indexes for pruning old runs (`coldsync prune`, the worker's retention job:
 * src/sync/retention.ts) and for the status page's requests per minute:
 * - `sync_runs` by account and end: the runs past the retention, oldest first,
 *   and the runs that ended inside the status page's window (that query read
 *   the account's whole run history);
 * - the two columns that reference a run (`ON DELETE SET NULL`): without an
 *   index, PostgreSQL looks for each deleted run's references by reading the
 *   whole of `sync_checkpoints` and `rejected_records`, once per run.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX sync_runs_account_finished_at_idx ON sync_runs (account, finished_at)`.execute(db);
  await sql`CREATE INDEX sync_checkpoints_last_run_id_idx ON sync_checkpoints (last_run_id)`.execute(db);
  await sql`CREATE INDEX rejected_records_run_id_idx ON rejected_records (run_id)`.execute(db);
}
