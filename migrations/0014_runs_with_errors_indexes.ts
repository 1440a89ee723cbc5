import { sql, type Kysely } from "kysely";

/**
 * The runs with errors, indexed for the status page's last error per
 * campaign (src/http/status-page/last-errors.ts), which looks each campaign
 * up on its own instead of reading a window of the account's latest runs:
 * - by account and scope, newest first: a campaign job's last run with
 *   errors, and the account-wide runs' (scope null) for the account-level
 *   streams;
 * - the account-wide runs' errors by content, to find the last one that
 *   named a campaign (jsonb_path_ops answers `errors @> '[{"campaign_uid": …}]'`).
 * Partial: runs without errors, the great majority, stay out of both.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX sync_runs_errors_by_scope_idx ON sync_runs (account, scope, id DESC) WHERE errors <> '[]'::jsonb`.execute(db);
  await sql`CREATE INDEX sync_runs_account_run_errors_idx ON sync_runs USING gin (errors jsonb_path_ops) WHERE scope IS NULL AND errors <> '[]'::jsonb`.execute(db);
}
