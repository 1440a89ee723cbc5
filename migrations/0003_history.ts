import { sql, type Kysely } from "kysely";

/**
 * Slowly changing history of what the upstream overwrites in place: a
 * campaign's status and settings, a workspace's credits and counters, a
 * domain's setup and warm-up. Triggers compare the current values with the
 * open history row and write a new row only when they differ, so re-syncing
 * unchanged data adds nothing. valid_from comes from clock_timestamp(), nudged
 * past the open row's, so two changes in one transaction get distinct keys.
 * Functions pin the search_path they were created with, so they find their
 * tables whatever the session's search_path is.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const statements = [
    sql`CREATE TABLE campaign_history (
      campaign_uid text NOT NULL,
      valid_from timestamptz NOT NULL,
      valid_to timestamptz,
      status text NOT NULL,
      settings jsonb NOT NULL,
      PRIMARY KEY (campaign_uid, valid_from)
    )`,
    sql`CREATE UNIQUE INDEX campaign_history_open_idx ON campaign_history (campaign_uid) WHERE valid_to IS NULL`,
    sql`CREATE TABLE workspace_history (
      workspace_id bigint NOT NULL,
      valid_from timestamptz NOT NULL,
      valid_to timestamptz,
      credits_remaining integer NOT NULL,
      total_emails_sent integer NOT NULL,
      total_replies_received integer NOT NULL,
      subscription_plan text NOT NULL,
      billing_period text NOT NULL,
      next_renewal_date timestamptz,
      PRIMARY KEY (workspace_id, valid_from)
    )`,
    sql`CREATE UNIQUE INDEX workspace_history_open_idx ON workspace_history (workspace_id) WHERE valid_to IS NULL`,
    sql`CREATE TABLE domain_history (
      domain_id bigint NOT NULL,
      valid_from timestamptz NOT NULL,
      valid_to timestamptz,
      status text NOT NULL,
      setup_complete boolean NOT NULL,
      warmup_days_remaining integer NOT NULL,
      warmup_active_days integer NOT NULL,
      PRIMARY KEY (domain_id, valid_from)
    )`,
    sql`CREATE UNIQUE INDEX domain_history_open_idx ON domain_history (domain_id) WHERE valid_to IS NULL`,

    // A campaign's history row depends on two tables (campaigns and
    // campaign_sending_domains), so it is rebuilt from both whenever either changes.
    // The advisory lock serialises writers of the same campaign: without it, a
    // domains write and a campaign write in two transactions could both open a row.
    sql`CREATE FUNCTION record_campaign_history(target_uid text) RETURNS void
      LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
      DECLARE
        current_status text;
        current_settings jsonb;
        open_row campaign_history%ROWTYPE;
        stamp timestamptz := clock_timestamp();
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
                   '[]'::jsonb))
          INTO current_status, current_settings
          FROM campaigns c
         WHERE c.uid = target_uid;
        IF NOT FOUND THEN
          RETURN;
        END IF;
        SELECT * INTO open_row FROM campaign_history WHERE campaign_uid = target_uid AND valid_to IS NULL;
        IF FOUND THEN
          IF open_row.status = current_status AND open_row.settings = current_settings THEN
            RETURN;
          END IF;
          stamp := greatest(stamp, open_row.valid_from + interval '1 microsecond');
          UPDATE campaign_history SET valid_to = stamp WHERE campaign_uid = target_uid AND valid_from = open_row.valid_from;
        END IF;
        INSERT INTO campaign_history (campaign_uid, valid_from, status, settings)
        VALUES (target_uid, stamp, current_status, current_settings);
      END $$`,
    sql`CREATE FUNCTION campaigns_history_trigger() RETURNS trigger
      LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
      BEGIN
        PERFORM record_campaign_history(NEW.uid);
        RETURN NULL;
      END $$`,
    sql`CREATE TRIGGER campaigns_history AFTER INSERT OR UPDATE ON campaigns
      FOR EACH ROW EXECUTE FUNCTION campaigns_history_trigger()`,
    sql`CREATE FUNCTION campaign_sending_domains_history_trigger() RETURNS trigger
      LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
      BEGIN
        PERFORM record_campaign_history(NEW.campaign_uid);
        RETURN NULL;
      END $$`,
    sql`CREATE TRIGGER campaign_sending_domains_history AFTER INSERT OR UPDATE ON campaign_sending_domains
      FOR EACH ROW EXECUTE FUNCTION campaign_sending_domains_history_trigger()`,

    // Workspaces and domains: the history depends on the row alone, whose row lock serialises writers.
    sql`CREATE FUNCTION workspaces_history_trigger() RETURNS trigger
      LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
      DECLARE
        open_row workspace_history%ROWTYPE;
        stamp timestamptz := clock_timestamp();
      BEGIN
        SELECT * INTO open_row FROM workspace_history WHERE workspace_id = NEW.id AND valid_to IS NULL;
        IF FOUND THEN
          IF (open_row.credits_remaining, open_row.total_emails_sent, open_row.total_replies_received,
              open_row.subscription_plan, open_row.billing_period, open_row.next_renewal_date)
             IS NOT DISTINCT FROM
             (NEW.credits_remaining, NEW.total_emails_sent, NEW.total_replies_received,
              NEW.subscription_plan, NEW.billing_period, NEW.next_renewal_date) THEN
            RETURN NULL;
          END IF;
          stamp := greatest(stamp, open_row.valid_from + interval '1 microsecond');
          UPDATE workspace_history SET valid_to = stamp WHERE workspace_id = NEW.id AND valid_from = open_row.valid_from;
        END IF;
        INSERT INTO workspace_history (workspace_id, valid_from, credits_remaining, total_emails_sent,
          total_replies_received, subscription_plan, billing_period, next_renewal_date)
        VALUES (NEW.id, stamp, NEW.credits_remaining, NEW.total_emails_sent,
          NEW.total_replies_received, NEW.subscription_plan, NEW.billing_period, NEW.next_renewal_date);
        RETURN NULL;
      END $$`,
    sql`CREATE TRIGGER workspaces_history AFTER INSERT OR UPDATE ON workspaces
      FOR EACH ROW EXECUTE FUNCTION workspaces_history_trigger()`,
    sql`CREATE FUNCTION domains_history_trigger() RETURNS trigger
      LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
      DECLARE
        open_row domain_history%ROWTYPE;
        stamp timestamptz := clock_timestamp();
      BEGIN
        SELECT * INTO open_row FROM domain_history WHERE domain_id = NEW.id AND valid_to IS NULL;
        IF FOUND THEN
          IF (open_row.status, open_row.setup_complete, open_row.warmup_days_remaining, open_row.warmup_active_days)
             IS NOT DISTINCT FROM
             (NEW.status, NEW.setup_complete, NEW.warmup_days_remaining, NEW.warmup_active_days) THEN
            RETURN NULL;
          END IF;
          stamp := greatest(stamp, open_row.valid_from + interval '1 microsecond');
          UPDATE domain_history SET valid_to = stamp WHERE domain_id = NEW.id AND valid_from = open_row.valid_from;
        END IF;
        INSERT INTO domain_history (domain_id, valid_from, status, setup_complete, warmup_days_remaining, warmup_active_days)
        VALUES (NEW.id, stamp, NEW.status, NEW.setup_complete, NEW.warmup_days_remaining, NEW.warmup_active_days);
        RETURN NULL;
      END $$`,
    sql`CREATE TRIGGER domains_history AFTER INSERT OR UPDATE ON domains
      FOR EACH ROW EXECUTE FUNCTION domains_history_trigger()`,
  ];
  for (const statement of statements) await statement.execute(db);
}
