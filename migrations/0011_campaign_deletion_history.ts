import { sql, type Kysely } from "kysely";

/**
 * A campaign's deletion is not a change of its settings, nor is its return.
 * The deletion takes the campaign's sending domains with it (soft-deleted with
 * their campaign), and the history, which listed the live ones, recorded a
 * version whose `sending_domains` was empty, dated by the campaign's last
 * observation (hours before the deletion, it claimed the campaign had stopped
 * sending from its domains then); so did the campaign's return, until its
 * next detail read the domains again.
 *
 * Only a detail read says which domains a campaign sends from, and it dates
 * the domains it no longer lists by its own observation (run-lookup.ts), the
 * campaign's `_detail_observed_at`. So a domain deleted after the campaign's
 * last detail read (by the cascade of its deletion) still counts as one it
 * sends from, and a deleted campaign records no version at all: its last one
 * stays open, as the last state the upstream showed. The function is 0005's,
 * with those two conditions added; the domains earlier detail reads deleted
 * are redated to those reads.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE OR REPLACE FUNCTION record_campaign_history(target_uid text) RETURNS void
      LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
      DECLARE
        current_status text;
        current_settings jsonb;
        observed timestamptz;
        deleted boolean;
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
                     WHERE d.campaign_uid = c.uid
                       AND (d._deleted_at IS NULL OR d._deleted_at > c._detail_observed_at)),
                   '[]'::jsonb)),
               c._observed_at,
               c._deleted_at IS NOT NULL
          INTO current_status, current_settings, observed, deleted
          FROM campaigns c
         WHERE c.uid = target_uid;
        IF NOT FOUND OR deleted THEN
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
      END $$`.execute(db);
  // Before, a detail read dated the domains it no longer listed by the end of its write, a moment after its
  // observation: redated to it, or they would count again. Domains a campaign's deletion took keep their date.
  await sql`UPDATE campaign_sending_domains d SET _deleted_at = c._detail_observed_at
              FROM campaigns c
             WHERE d.campaign_uid = c.uid
               AND d._deleted_at > c._detail_observed_at
               AND (c._deleted_at IS NULL OR d._deleted_at < c._deleted_at)`.execute(db);
}
