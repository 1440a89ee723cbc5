import { sql, type Kysely } from "kysely";

/**
 * Tolerant ingestion (README, "When the upstream deviates"). A record whose
 * key can be read is always kept, so:
 * - upstream-owned columns outside the keys may be NULL, and enums the
 *   upstream owns are plain text (a status it adds next month is data, not a
 *   constraint violation); CHECKs stay on coldsync's own columns;
 * - each synced table gets `_field_issues`: per source (the stream that read
 *   the record), per dotted field path, the reason, the raw value and when
 *   that issue was first seen;
 * - the `field_issues` view lists them, one line per row and field;
 * - a campaign's history gets one row per observed state: the history
 *   triggers are deferred to the end of the transaction, so a detail write
 *   that changes the status and the sending domains records one state, not
 *   the intermediate ones, and it is dated by the observation (`_observed_at`);
 * - a rejected record is one row per identity (its readable key, else its
 *   payload), with what it held below it and when it stopped being seen.
 */

const SYNCED_TABLES = [
  "workspaces",
  "domains",
  "contact_lists",
  "campaigns",
  "campaign_sending_domains",
  "email_sequences",
  "leads",
  "contacts",
  "schedules",
  "replies",
  "link_clicks",
  "email_opens",
] as const;

/** Upstream fields that are not part of a key, per table: a deviating one is stored as NULL. */
const RELAXED_COLUMNS: Record<string, readonly string[]> = {
  workspaces: ["created_on", "subscription_plan", "name", "credits_remaining", "billing_period", "time_zone", "total_emails_sent", "total_replies_received"],
  domains: ["workspace_id", "domain", "status", "created_on", "setup_complete", "naming_strategy", "custom_name", "warmup_days_remaining", "redirect_subdomains_to", "warmup_active_days"],
  contact_lists: ["workspace_id", "name", "created_on", "status", "source", "has_unsubscribe_column", "unsubscribe_column_name"],
  campaigns: ["name", "created_on", "status"],
  leads: ["contact_id", "sender_email_address", "sender_name"],
  contacts: ["email_id", "bounced", "unsubscribed"],
  schedules: ["email_sequence_id", "status", "schedule_datetime", "reply_received", "email_opened", "email_open_count"],
  replies: ["body_plain_text", "body_html", "received_on", "reply_classification"],
  workspace_history: ["credits_remaining", "total_emails_sent", "total_replies_received", "subscription_plan", "billing_period"],
  domain_history: ["status", "setup_complete", "warmup_days_remaining", "warmup_active_days"],
  campaign_history: ["status"],
};

/** CHECKs on values the upstream owns (0001): an enum value it adds must land. */
const UPSTREAM_ENUM_CHECKS: readonly [string, string][] = [
  ["workspaces", "workspaces_billing_period_check"],
  ["campaigns", "campaigns_status_check"],
  ["campaigns", "campaigns_scheduling_strategy_check"],
  ["campaigns", "campaigns_unsub_link_type_check"],
  ["email_sequences", "email_sequences_label_check"],
  ["email_sequences", "email_sequences_email_content_type_check"],
  ["replies", "replies_reply_classification_check"],
];

export async function up(db: Kysely<unknown>): Promise<void> {
  const statements = [
    ...UPSTREAM_ENUM_CHECKS.map(([table, check]) => sql`ALTER TABLE ${sql.id(table)} DROP CONSTRAINT ${sql.id(check)}`),
    ...Object.entries(RELAXED_COLUMNS).flatMap(([table, columns]) =>
      columns.map((column) => sql`ALTER TABLE ${sql.id(table)} ALTER COLUMN ${sql.id(column)} DROP NOT NULL`),
    ),
    ...SYNCED_TABLES.map((table) => sql`ALTER TABLE ${sql.id(table)} ADD COLUMN _field_issues jsonb`),
    sql`ALTER TABLE campaigns ADD COLUMN _observed_at timestamptz`,
    sql`UPDATE campaigns SET _observed_at = _synced_at`,
    sql`ALTER TABLE campaigns ALTER COLUMN _observed_at SET NOT NULL`,

    // One source's issues replace that source's previous ones and leave the other sources' alone, so two
    // endpoints that read one record differently (the reply listing and a schedule's copy) never undo each
    // other. An issue seen again unchanged keeps the time it was first seen, so re-reading rewrites nothing.
    sql`CREATE FUNCTION merge_field_issues(current_issues jsonb, incoming jsonb, source text, seen_at timestamptz) RETURNS jsonb
      LANGUAGE sql IMMUTABLE AS $$
        SELECT nullif(
          (coalesce(current_issues, '{}'::jsonb) - source)
          || CASE WHEN incoming IS NULL THEN '{}'::jsonb ELSE jsonb_build_object(source, (
               SELECT jsonb_object_agg(issue.key, issue.value || jsonb_build_object('first_seen_at',
                        CASE WHEN current_issues->source->issue.key->'reason' IS NOT DISTINCT FROM issue.value->'reason'
                              AND current_issues->source->issue.key->'raw' IS NOT DISTINCT FROM issue.value->'raw'
                             THEN current_issues->source->issue.key->'first_seen_at'
                             ELSE to_jsonb(seen_at) END))
                 FROM jsonb_each(incoming) AS issue)) END,
          '{}'::jsonb)
      $$`,

    sql`ALTER TABLE sync_runs ADD COLUMN field_issues jsonb NOT NULL DEFAULT '{}'`,
    sql`ALTER TABLE sync_runs ADD COLUMN skipped integer NOT NULL DEFAULT 0`,

    sql`CREATE VIEW field_issues AS
      WITH rows_with_issues AS (
        SELECT 'workspaces' AS table_name, id::text AS record_key, _field_issues, _deleted_at FROM workspaces WHERE _field_issues IS NOT NULL
        UNION ALL SELECT 'domains', id::text, _field_issues, _deleted_at FROM domains WHERE _field_issues IS NOT NULL
        UNION ALL SELECT 'contact_lists', uid, _field_issues, _deleted_at FROM contact_lists WHERE _field_issues IS NOT NULL
        UNION ALL SELECT 'campaigns', uid, _field_issues, _deleted_at FROM campaigns WHERE _field_issues IS NOT NULL
        UNION ALL SELECT 'campaign_sending_domains', campaign_uid || '|' || domain_id::text, _field_issues, _deleted_at FROM campaign_sending_domains WHERE _field_issues IS NOT NULL
        UNION ALL SELECT 'email_sequences', id::text, _field_issues, _deleted_at FROM email_sequences WHERE _field_issues IS NOT NULL
        UNION ALL SELECT 'leads', uid, _field_issues, _deleted_at FROM leads WHERE _field_issues IS NOT NULL
        UNION ALL SELECT 'contacts', id::text, _field_issues, _deleted_at FROM contacts WHERE _field_issues IS NOT NULL
        UNION ALL SELECT 'schedules', id::text, _field_issues, _deleted_at FROM schedules WHERE _field_issues IS NOT NULL
        UNION ALL SELECT 'replies', id::text, _field_issues, _deleted_at FROM replies WHERE _field_issues IS NOT NULL
        UNION ALL SELECT 'link_clicks', schedule_id::text || '|' || link || '|' || to_char(clicked_on AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), _field_issues, _deleted_at FROM link_clicks WHERE _field_issues IS NOT NULL
        UNION ALL SELECT 'email_opens', schedule_id::text || '|' || to_char(opened_on AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), _field_issues, _deleted_at FROM email_opens WHERE _field_issues IS NOT NULL
      ),
      last_seen AS (
        -- The end of the latest run that met each kind of issue (table and field).
        SELECT kind.key AS table_field, max(r.finished_at) AS last_seen_at
          FROM sync_runs r, jsonb_each(r.field_issues) AS kind
         WHERE r.finished_at IS NOT NULL
         GROUP BY kind.key
      )
      SELECT r.table_name,
             r.record_key,
             source.key AS source,
             issue.key AS field,
             issue.value->>'reason' AS reason,
             issue.value->'raw' AS raw_value,
             (issue.value->>'first_seen_at')::timestamptz AS first_seen_at,
             greatest(l.last_seen_at, (issue.value->>'first_seen_at')::timestamptz) AS last_seen_at
        FROM rows_with_issues r
        CROSS JOIN LATERAL jsonb_each(r._field_issues) AS source
        CROSS JOIN LATERAL jsonb_each(source.value) AS issue
        LEFT JOIN last_seen l ON l.table_field = r.table_name || '.' || regexp_replace(issue.key, '\\.\\d+(\\.|$)', '.*\\1', 'g')
       WHERE r._deleted_at IS NULL`,

    sql`ALTER TABLE rejected_records DROP CONSTRAINT rejected_records_account_stream_payload_sha256_key`,
    sql`ALTER TABLE rejected_records ADD COLUMN record_key text`,
    sql`ALTER TABLE rejected_records ADD COLUMN parent_key text`,
    sql`ALTER TABLE rejected_records ADD COLUMN skipped integer NOT NULL DEFAULT 0`,
    sql`ALTER TABLE rejected_records ADD COLUMN resolved_at timestamptz`,
    sql`ALTER TABLE rejected_records ADD COLUMN identity text`,
    sql`UPDATE rejected_records SET identity = coalesce(campaign_uid, '') || '/sha:' || payload_sha256`,
    sql`ALTER TABLE rejected_records ALTER COLUMN identity SET NOT NULL`,
    sql`ALTER TABLE rejected_records ADD CONSTRAINT rejected_records_identity_key UNIQUE (account, stream, identity)`,

    // History: one row per observed state, dated by the observation, written when the transaction ends.
    sql`DROP TRIGGER campaigns_history ON campaigns`,
    sql`DROP TRIGGER campaign_sending_domains_history ON campaign_sending_domains`,
    sql`DROP FUNCTION record_campaign_history(text)`,
    sql`CREATE FUNCTION record_campaign_history(target_uid text) RETURNS void
      LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
      DECLARE
        current_status text;
        current_settings jsonb;
        observed timestamptz;
        open_row campaign_history%ROWTYPE;
        stamp timestamptz;
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtextextended('coldsync.campaign_history:' || target_uid, 0));
        SELECT c.status,
               jsonb_build_object(
                 'name', c.name,
                 'reply_to_address', c.reply_to_address,
                 'daily_email_limit', c.daily_email_limit,
                 'skip_days', c.skip_days,
                 'single_subject', c.single_subject,
                 'scheduling_strategy', c.scheduling_strategy,
                 'from_time', c.from_time,
                 'to_time', c.to_time,
                 'time_zone', c.time_zone,
                 'add_unsub_link', c.add_unsub_link,
                 'unsub_link_type', c.unsub_link_type,
                 'custom_unsub_text', c.custom_unsub_text,
                 'click_tracking_enabled', c.click_tracking_enabled,
                 'open_tracking_enabled', c.open_tracking_enabled,
                 'skip_dangerous_emails', c.skip_dangerous_emails,
                 'skip_disposable_emails', c.skip_disposable_emails,
                 'skip_catchall_emails', c.skip_catchall_emails,
                 'skip_full_inbox_emails', c.skip_full_inbox_emails,
                 'skip_invalid_emails', c.skip_invalid_emails,
                 'forward_negative_emails', c.forward_negative_emails,
                 'forward_netural_emails', c.forward_netural_emails,
                 'sending_domains', COALESCE(
                   (SELECT jsonb_agg(d.domain_id ORDER BY d.domain_id)
                      FROM campaign_sending_domains d
                     WHERE d.campaign_uid = c.uid AND d._deleted_at IS NULL),
                   '[]'::jsonb)),
               c._observed_at
          INTO current_status, current_settings, observed
          FROM campaigns c
         WHERE c.uid = target_uid;
        IF NOT FOUND THEN
          RETURN;
        END IF;
        stamp := observed;
        SELECT * INTO open_row FROM campaign_history WHERE campaign_uid = target_uid AND valid_to IS NULL;
        IF FOUND THEN
          IF open_row.status IS NOT DISTINCT FROM current_status AND open_row.settings = current_settings THEN
            RETURN;
          END IF;
          stamp := greatest(stamp, open_row.valid_from + interval '1 microsecond');
          UPDATE campaign_history SET valid_to = stamp WHERE campaign_uid = target_uid AND valid_from = open_row.valid_from;
        END IF;
        INSERT INTO campaign_history (campaign_uid, valid_from, status, settings)
        VALUES (target_uid, stamp, current_status, current_settings);
      END $$`,
    sql`CREATE CONSTRAINT TRIGGER campaigns_history AFTER INSERT OR UPDATE ON campaigns
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION campaigns_history_trigger()`,
    sql`CREATE CONSTRAINT TRIGGER campaign_sending_domains_history AFTER INSERT OR UPDATE ON campaign_sending_domains
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION campaign_sending_domains_history_trigger()`,
  ];
  for (const statement of statements) await statement.execute(db);
}
