import { sql, type Kysely } from "kysely";

/**
 * A campaign version is dated by the newest read that made it. A detail read
 * whose status could not be read (drift: null, missing) moves only
 * `_detail_observed_at` (the listing's status must still land after it), and
 * the history dated versions by `_observed_at` alone: a settings change such
 * a detail saw was dated by the read before it (plus a microsecond), that is
 * before anything had observed it. Versions are now dated by the later of the
 * two observations, and versions dated before the detail read they hold
 * (`detail_observed_at`) move to it, once, the version before each closing
 * where it opens.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
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
        -- The newest read that may have changed what the version holds: a detail that could not read the status
        -- moved only its own observation.
        stamp := greatest(observed, detail_observed);
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

  await sql`DO $$
      DECLARE
        target text;
        versions campaign_history[];
        version campaign_history;
        previous_from timestamptz;
      BEGIN
        FOR target IN SELECT DISTINCT campaign_uid FROM campaign_history WHERE valid_from < detail_observed_at LOOP
          versions := ARRAY(SELECT h FROM campaign_history h WHERE h.campaign_uid = target ORDER BY h.valid_from);
          previous_from := NULL;
          FOR i IN 1 .. cardinality(versions) LOOP
            version := versions[i];
            version.valid_from := greatest(version.valid_from, version.detail_observed_at, previous_from + interval '1 microsecond');
            versions[i] := version;
            previous_from := version.valid_from;
          END LOOP;
          -- Versions follow each other without a gap: each closes where the next opens; the last keeps its end
          -- (a deletion's), never before its start.
          FOR i IN 1 .. cardinality(versions) LOOP
            version := versions[i];
            version.valid_to := CASE WHEN i < cardinality(versions) THEN versions[i + 1].valid_from
                                     WHEN version.valid_to IS NOT NULL THEN greatest(version.valid_to, version.valid_from) END;
            versions[i] := version;
          END LOOP;
          DELETE FROM campaign_history WHERE campaign_uid = target;
          INSERT INTO campaign_history SELECT * FROM unnest(versions);
        END LOOP;
      END $$`.execute(db);
}
