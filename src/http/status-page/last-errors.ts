import { sql, type Kysely } from "kysely";
import type { Database } from "../../warehouse/database.ts";

/**
 * The last error a run recorded for each live campaign of the account, and
 * for the account-level streams. Each is looked up on its own, through the
 * indexes of migration 0014: a complete campaign synced once a day keeps its
 * unrecovered error on the page however many runs of other campaigns
 * recorded errors since (a window of the account's latest runs with errors
 * lost it among thousands of campaigns' routine 429s).
 */

export interface ErrorRow {
  campaign_uid: string | null;
  run_id: number;
  stream: string | null;
  message: string | null;
  at: Date | null;
}

/** Errors name their campaign; a campaign job's run-level error names none, but the run's scope does. */
const errorColumns = sql`r.id AS run_id, e->>'stream' AS stream, e->>'message' AS message, coalesce(r.finished_at, r.started_at) AS at`;

/** Runs with errors, as the partial indexes of 0014 name them (the type check guards jsonb_array_elements). */
const withErrors = sql`r.errors <> '[]'::jsonb AND jsonb_typeof(r.errors) = 'array'`;

/** A campaign's last error: from its own jobs' runs, or from an account-wide run (`coldsync sync`) that named it. */
function lastErrorOfCampaign(account: string) {
  return sql`
    (SELECT ${errorColumns} FROM sync_runs r CROSS JOIN LATERAL jsonb_array_elements(r.errors) e
      WHERE r.account = ${account} AND r.scope = c.uid AND ${withErrors} AND coalesce(e->>'campaign_uid', r.scope) = c.uid
      ORDER BY r.id DESC LIMIT 1)
    UNION ALL
    (SELECT ${errorColumns} FROM sync_runs r CROSS JOIN LATERAL jsonb_array_elements(r.errors) e
      WHERE r.account = ${account} AND r.scope IS NULL AND ${withErrors}
        AND r.errors @> jsonb_build_array(jsonb_build_object('campaign_uid', c.uid)) AND e->>'campaign_uid' = c.uid
      ORDER BY r.id DESC LIMIT 1)
    ORDER BY run_id DESC LIMIT 1`;
}

/**
 * Keyed by campaign uid; key null: the account-level streams or an account-wide run as a whole. The account's
 * own error is ordered by scope (null throughout) too: ordered by id alone, PostgreSQL walks the primary key
 * back through every account's runs instead of taking the account's from the index on (account, scope, id).
 */
export async function lastErrors(db: Kysely<Database>, account: string): Promise<Map<string | null, ErrorRow>> {
  const { rows } = await sql<ErrorRow>`
    SELECT c.uid AS campaign_uid, last.* FROM campaigns c
     CROSS JOIN LATERAL (${lastErrorOfCampaign(account)}) last
     WHERE c._account = ${account} AND c._deleted_at IS NULL
    UNION ALL
    (SELECT NULL, ${errorColumns} FROM sync_runs r CROSS JOIN LATERAL jsonb_array_elements(r.errors) e
      WHERE r.account = ${account} AND r.scope IS NULL AND ${withErrors} AND e->>'campaign_uid' IS NULL
      ORDER BY r.scope, r.id DESC LIMIT 1)`.execute(db);
  return new Map(rows.map((row) => [row.campaign_uid, row]));
}
