import { sql, type Kysely } from "kysely";

/**
 * The result of each `coldsync verify` (and of the worker's periodic
 * verification): what did not match, so that /metrics on any worker, and
 * anyone reading the warehouse, sees the last verdict.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const statements = [
    sql`CREATE TABLE verifications (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account text NOT NULL,
      trigger text NOT NULL CHECK (trigger IN ('cli', 'worker', 'demo')),
      started_at timestamptz NOT NULL,
      finished_at timestamptz NOT NULL,
      checks integer NOT NULL,
      problems integer NOT NULL,
      requests integer NOT NULL,
      lines jsonb NOT NULL
    )`,
    sql`CREATE INDEX verifications_account_finished_at_idx ON verifications (account, finished_at DESC)`,
  ];
  for (const statement of statements) await statement.execute(db);
}
