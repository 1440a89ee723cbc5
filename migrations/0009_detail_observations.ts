import { sql, type Kysely } from "kysely";

/**
 * A campaign row has two sources, read by different jobs at different
 * moments: the account's listing (a summary: name, workspace, status) and the
 * campaign's detail (everything). `_observed_at` orders every observation of
 * the summary; `_detail_observed_at` orders the detail reads, which alone
 * write the other columns. Before, one time guarded the whole row, so a detail
 * read before a listing page but committed after it was dropped whole: its
 * settings, bounces and completed_at waited for the next detail read.
 *
 * Rows written before this migration had their detail (if any) observed no
 * later than the row, so `_observed_at` is their best known detail time.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE campaigns ADD COLUMN _detail_observed_at timestamptz`.execute(db);
  await sql`UPDATE campaigns SET _detail_observed_at = _observed_at
              WHERE campaign_paused IS NOT NULL OR archived IS NOT NULL OR daily_email_limit IS NOT NULL OR time_zone IS NOT NULL
                 OR _field_issues ? 'campaign_detail'`.execute(db);
}
