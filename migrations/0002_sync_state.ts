import { sql, type Kysely } from "kysely";

/** Where each stream stands, one row per sync run, and the records that failed validation. */
export async function up(db: Kysely<unknown>): Promise<void> {
  const statements = [
    sql`CREATE TABLE sync_runs (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      account text NOT NULL,
      scope text,
      trigger text NOT NULL CHECK (trigger IN ('cli', 'worker', 'demo')),
      started_at timestamptz NOT NULL,
      finished_at timestamptz,
      outcome text NOT NULL DEFAULT 'running' CHECK (outcome IN ('running', 'succeeded', 'partial', 'failed', 'aborted')),
      counts jsonb NOT NULL DEFAULT '{}',
      requests integer NOT NULL DEFAULT 0,
      retries integer NOT NULL DEFAULT 0,
      rejected integer NOT NULL DEFAULT 0,
      errors jsonb NOT NULL DEFAULT '[]'
    )`,
    sql`CREATE INDEX sync_runs_account_started_at_idx ON sync_runs (account, started_at DESC)`,
    sql`CREATE TABLE sync_checkpoints (
      account text NOT NULL,
      campaign_uid text NOT NULL,
      stream text NOT NULL,
      cursor_offset integer NOT NULL DEFAULT 0,
      upstream_total integer,
      fingerprint text,
      scan_started_at timestamptz,
      last_complete_scan_at timestamptz,
      last_run_id bigint REFERENCES sync_runs (id) ON DELETE SET NULL,
      state jsonb NOT NULL DEFAULT '{}',
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (account, campaign_uid, stream)
    )`,
    sql`CREATE TABLE rejected_records (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      run_id bigint REFERENCES sync_runs (id) ON DELETE SET NULL,
      account text NOT NULL,
      stream text NOT NULL,
      campaign_uid text,
      reason text NOT NULL,
      payload jsonb NOT NULL,
      payload_sha256 text NOT NULL,
      first_seen_at timestamptz NOT NULL,
      last_seen_at timestamptz NOT NULL,
      times_seen integer NOT NULL DEFAULT 1,
      UNIQUE (account, stream, payload_sha256)
    )`,
  ];
  for (const statement of statements) await statement.execute(db);
}
