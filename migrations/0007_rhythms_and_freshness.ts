import { sql, type Kysely } from "kysely";

/**
 * Two rhythms per campaign (README, "Freshness"): a campaign's runs say which
 * rhythm they belong to (`leads`, `events`, or null for a run of everything);
 * and the `event_freshness` view measures, per event, how long it took to
 * reach the warehouse: from the event's own time to the time the warehouse
 * first held it.
 *
 * A run also names the lock its process holds while the run lasts (`holder`):
 * a row still `running` whose lock nobody holds belongs to a process that is
 * gone, and is closed as aborted (README, "Failure modes").
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const statements = [
    sql`ALTER TABLE sync_runs ADD COLUMN rhythm text CHECK (rhythm IN ('leads', 'events'))`,
    sql`ALTER TABLE sync_runs ADD COLUMN holder text`,
    sql`CREATE VIEW event_freshness AS
      SELECT 'replies' AS stream, campaign_uid, received_on AS happened_at, _first_seen_at AS synced_at, _first_seen_at - received_on AS lag
        FROM replies WHERE received_on IS NOT NULL
      UNION ALL
      SELECT 'link_clicks', campaign_uid, clicked_on, _first_seen_at, _first_seen_at - clicked_on FROM link_clicks
      UNION ALL
      SELECT 'email_opens', campaign_uid, opened_on, _first_seen_at, _first_seen_at - opened_on FROM email_opens`,
  ];
  for (const statement of statements) await statement.execute(db);
}
