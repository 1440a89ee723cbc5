import { sql, type Kysely } from "kysely";

/**
 * The `field_issues` view gains `account`: a warehouse may hold several
 * accounts (COLDSYNC_ACCOUNT), and `coldsync status`, the status page and
 * the metrics of one account counted every account's deviating fields.
 * Account tables carry `_account`; a campaign's rows take their campaign's;
 * a contact (shared by the leads that hold it) takes the account of a lead's
 * campaign. The columns before it are unchanged, so queries on the view keep
 * working.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const ofCampaign = (table: string) => sql.raw(`(SELECT c._account FROM campaigns c WHERE c.uid = ${table}.campaign_uid)`);
  await sql`CREATE OR REPLACE VIEW field_issues AS
      WITH rows_with_issues AS (
        SELECT 'workspaces' AS table_name, id::text AS record_key, _field_issues, _deleted_at, _account AS account FROM workspaces WHERE _field_issues IS NOT NULL
        UNION ALL SELECT 'domains', id::text, _field_issues, _deleted_at, _account FROM domains WHERE _field_issues IS NOT NULL
        UNION ALL SELECT 'contact_lists', uid, _field_issues, _deleted_at, _account FROM contact_lists WHERE _field_issues IS NOT NULL
        UNION ALL SELECT 'campaigns', uid, _field_issues, _deleted_at, _account FROM campaigns WHERE _field_issues IS NOT NULL
        UNION ALL SELECT 'campaign_sending_domains', campaign_uid || '|' || domain_id::text, _field_issues, _deleted_at, ${ofCampaign("campaign_sending_domains")} FROM campaign_sending_domains WHERE _field_issues IS NOT NULL
        UNION ALL SELECT 'email_sequences', id::text, _field_issues, _deleted_at, ${ofCampaign("email_sequences")} FROM email_sequences WHERE _field_issues IS NOT NULL
        UNION ALL SELECT 'leads', uid, _field_issues, _deleted_at, ${ofCampaign("leads")} FROM leads WHERE _field_issues IS NOT NULL
        UNION ALL SELECT 'contacts', id::text, _field_issues, _deleted_at,
                         (SELECT c._account FROM leads l JOIN campaigns c ON c.uid = l.campaign_uid WHERE l.contact_id = contacts.id LIMIT 1)
                    FROM contacts WHERE _field_issues IS NOT NULL
        UNION ALL SELECT 'schedules', id::text, _field_issues, _deleted_at, ${ofCampaign("schedules")} FROM schedules WHERE _field_issues IS NOT NULL
        UNION ALL SELECT 'replies', id::text, _field_issues, _deleted_at, ${ofCampaign("replies")} FROM replies WHERE _field_issues IS NOT NULL
        UNION ALL SELECT 'link_clicks', schedule_id::text || '|' || link || '|' || to_char(clicked_on AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), _field_issues, _deleted_at, ${ofCampaign("link_clicks")} FROM link_clicks WHERE _field_issues IS NOT NULL
        UNION ALL SELECT 'email_opens', schedule_id::text || '|' || to_char(opened_on AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), _field_issues, _deleted_at, ${ofCampaign("email_opens")} FROM email_opens WHERE _field_issues IS NOT NULL
      ),
      last_seen AS (
        -- The end of the latest run of the account that met each kind of issue (table and field).
        SELECT r.account, kind.key AS table_field, max(r.finished_at) AS last_seen_at
          FROM sync_runs r, jsonb_each(r.field_issues) AS kind
         WHERE r.finished_at IS NOT NULL
         GROUP BY r.account, kind.key
      )
      SELECT r.table_name,
             r.record_key,
             source.key AS source,
             issue.key AS field,
             issue.value->>'reason' AS reason,
             issue.value->'raw' AS raw_value,
             (issue.value->>'first_seen_at')::timestamptz AS first_seen_at,
             greatest(l.last_seen_at, (issue.value->>'first_seen_at')::timestamptz) AS last_seen_at,
             r.account
        FROM rows_with_issues r
        CROSS JOIN LATERAL jsonb_each(r._field_issues) AS source
        CROSS JOIN LATERAL jsonb_each(source.value) AS issue
        LEFT JOIN last_seen l ON l.account = r.account AND l.table_field = r.table_name || '.' || regexp_replace(issue.key, '\\.\\d+(\\.|$)', '.*\\1', 'g')
       WHERE r._deleted_at IS NULL`.execute(db);
}
