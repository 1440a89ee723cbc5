import { sql, type Kysely } from "kysely";

/**
 * The account's runs still `running`, indexed: every run that opens, each
 * campaign's included (several a minute), closes those whose process is gone
 * (README, "Failure modes"), and without this index that look read the
 * account's whole run history. Partial, so it holds only the few rows running
 * at any moment.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX sync_runs_running_idx ON sync_runs (account) WHERE outcome = 'running'`.execute(db);
}
