import { sql, type Kysely } from "kysely";

/**
 * Two more answers BI users got wrong (0012 again, with one change each).
 *
 * `campaign_history` kept the open version's name whenever the listing's
 * observation was newer than the detail's, also for the call a detail read
 * makes: a detail sent before a listing page and committed after it (an
 * update that renamed the campaign and changed a setting) recorded the old
 * name with the new settings, a state that never existed. Each version now
 * records the detail read its settings came from (`detail_observed_at`), and
 * the open version's name is kept only while no newer detail read has landed:
 * the listing alone adds no version but for a new status. (Versions from
 * before, without it, count as made by a detail read at their `valid_from`.)
 *
 * `campaign_funnel.bounce_rate` divided the upstream's count of the
 * campaign's bounces, which keeps the bounces of leads since removed, by the
 * emails the live schedules sent: wrong as soon as a bounced lead was
 * removed, and above 1 once enough were. It is now over every email the
 * warehouse saw the campaign send, soft-deleted schedules included
 * (`emails_sent_ever` is not a column of the view), and NULL when the
 * upstream counts more bounces than that (emails sent before the warehouse
 * first read the campaign's leads); `bounced` is still the upstream's count.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE campaign_history ADD COLUMN detail_observed_at timestamptz`.execute(db);
  await sql`CREATE OR REPLACE FUNCTION record_campaign_history(target_uid text) RETURNS void
      LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
      DECLARE
        current_status text;
        current_settings jsonb;
        observed timestamptz;
        detail_observed timestamptz;
        deleted boolean;
        open_row campaign_history%ROWTYPE;
        has_open_row boolean;
        stamp timestamptz;
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtextextended('coldsync.campaign_history:' || target_uid, 0));
        SELECT * INTO open_row FROM campaign_history WHERE campaign_uid = target_uid AND valid_to IS NULL;
        has_open_row := FOUND;
        SELECT c.status,
               jsonb_build_object(
                 'name', CASE WHEN has_open_row AND c._observed_at > c._detail_observed_at
                                   AND c._detail_observed_at <= COALESCE(open_row.detail_observed_at, open_row.valid_from)
                              THEN open_row.settings -> 'name'
                              ELSE to_jsonb(c.name) END,
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
               c._detail_observed_at,
               c._deleted_at IS NOT NULL
          INTO current_status, current_settings, observed, detail_observed, deleted
          FROM campaigns c
         WHERE c.uid = target_uid;
        IF NOT FOUND OR deleted THEN
          RETURN;
        END IF;
        stamp := observed;
        IF has_open_row THEN
          IF open_row.status IS NOT DISTINCT FROM current_status AND open_row.settings = current_settings THEN
            RETURN;
          END IF;
          stamp := greatest(stamp, open_row.valid_from + interval '1 microsecond');
          UPDATE campaign_history SET valid_to = stamp WHERE campaign_uid = target_uid AND valid_from = open_row.valid_from;
        END IF;
        INSERT INTO campaign_history (campaign_uid, valid_from, status, settings, detail_observed_at)
        VALUES (target_uid, stamp, current_status, current_settings, detail_observed);
      END $$`.execute(db);
  await sql`CREATE OR REPLACE VIEW campaign_funnel AS
      WITH lead_totals AS (
        SELECT l.campaign_uid,
               count(*) AS leads
          FROM leads l
         WHERE l._deleted_at IS NULL
         GROUP BY l.campaign_uid
      ),
      schedule_totals AS (
        SELECT campaign_uid,
               count(*) FILTER (WHERE sent) AS emails_sent,
               count(*) FILTER (WHERE opened) AS opened,
               count(*) FILTER (WHERE clicked) AS clicked,
               count(*) FILTER (WHERE replied) AS replied
          FROM schedule_engagement
         GROUP BY campaign_uid
      ),
      sent_ever AS (
        -- Every email the warehouse saw the campaign send, removed leads' included: what the upstream's bounce
        -- count counts from.
        SELECT campaign_uid, count(*) AS emails_sent_ever
          FROM schedules
         WHERE sent_on IS NOT NULL
         GROUP BY campaign_uid
      ),
      reply_totals AS (
        SELECT campaign_uid,
               count(*) FILTER (WHERE reply_classification = 'positive') AS positive_replies,
               count(*) FILTER (WHERE reply_classification = 'neutral') AS neutral_replies,
               count(*) FILTER (WHERE reply_classification = 'negative') AS negative_replies
          FROM replies
         WHERE _deleted_at IS NULL
         GROUP BY campaign_uid
      ),
      totals AS (
        SELECT c.uid AS campaign_uid,
               c.name,
               c.status,
               c.workspace_id,
               COALESCE(lt.leads, 0) AS leads,
               COALESCE(st.emails_sent, 0) AS emails_sent,
               COALESCE(st.opened, 0) AS opened,
               COALESCE(st.clicked, 0) AS clicked,
               COALESCE(st.replied, 0) AS replied,
               COALESCE(rt.positive_replies, 0) AS positive_replies,
               COALESCE(rt.neutral_replies, 0) AS neutral_replies,
               COALESCE(rt.negative_replies, 0) AS negative_replies,
               c.bounces::bigint AS bounced,
               COALESCE(se.emails_sent_ever, 0) AS emails_sent_ever
          FROM campaigns c
          LEFT JOIN lead_totals lt ON lt.campaign_uid = c.uid
          LEFT JOIN schedule_totals st ON st.campaign_uid = c.uid
          LEFT JOIN sent_ever se ON se.campaign_uid = c.uid
          LEFT JOIN reply_totals rt ON rt.campaign_uid = c.uid
         WHERE c._deleted_at IS NULL
      )
      SELECT campaign_uid, name, status, workspace_id,
             leads, emails_sent, opened, clicked, replied,
             positive_replies, neutral_replies, negative_replies, bounced,
             round(opened::numeric / NULLIF(emails_sent, 0), 4) AS open_rate,
             round(clicked::numeric / NULLIF(emails_sent, 0), 4) AS click_rate,
             round(replied::numeric / NULLIF(emails_sent, 0), 4) AS reply_rate,
             round(positive_replies::numeric / NULLIF(emails_sent, 0), 4) AS positive_reply_rate,
             CASE WHEN bounced <= emails_sent_ever THEN round(bounced::numeric / NULLIF(emails_sent_ever, 0), 4) END AS bounce_rate
        FROM totals`.execute(db);
}
