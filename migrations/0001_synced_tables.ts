import { sql, type Kysely } from "kysely";

/**
 * The tables a sync writes (contract B). Column names are the spec's field
 * names. There are no foreign keys between them on purpose: streams arrive in
 * any order (events before their schedules, schedules before their sequence
 * is fetched), and a soft-deleted parent keeps its children.
 */

const BOOKKEEPING = sql.raw(`
  _extra jsonb,
  _synced_at timestamptz NOT NULL,
  _first_seen_at timestamptz NOT NULL,
  _deleted_at timestamptz`);

const CAMPAIGN_STATUS = sql.raw(`('creating', 'created', 'scheduled', 'running', 'paused', 'complete', 'cancelled', 'failed')`);

export async function up(db: Kysely<unknown>): Promise<void> {
  const statements = [
    sql`CREATE TABLE workspaces (
      id bigint PRIMARY KEY,
      _account text NOT NULL,
      created_on timestamptz NOT NULL,
      subscription_plan text NOT NULL,
      name text NOT NULL,
      credits_remaining integer NOT NULL,
      next_renewal_date timestamptz,
      billing_period text NOT NULL CHECK (billing_period IN ('monthly', 'annual')),
      time_zone text NOT NULL,
      total_emails_sent integer NOT NULL,
      total_replies_received integer NOT NULL,
      ${BOOKKEEPING}
    )`,
    sql`CREATE TABLE domains (
      id bigint PRIMARY KEY,
      _account text NOT NULL,
      workspace_id bigint NOT NULL,
      domain text NOT NULL,
      status text NOT NULL,
      created_on timestamptz NOT NULL,
      deletion_started_on timestamptz,
      setup_complete boolean NOT NULL,
      naming_strategy text NOT NULL,
      custom_name text NOT NULL,
      warmup_days_remaining integer NOT NULL,
      redirect_subdomains_to text NOT NULL,
      warmup_active_days integer NOT NULL,
      ${BOOKKEEPING}
    )`,
    sql`CREATE TABLE contact_lists (
      uid text PRIMARY KEY,
      _account text NOT NULL,
      workspace_id bigint NOT NULL,
      name text NOT NULL,
      created_on timestamptz NOT NULL,
      status text NOT NULL,
      source text NOT NULL,
      available_columns jsonb,
      has_unsubscribe_column boolean NOT NULL,
      unsubscribe_column_name text NOT NULL,
      ${BOOKKEEPING}
    )`,
    sql`CREATE TABLE campaigns (
      uid text PRIMARY KEY,
      _account text NOT NULL,
      name text NOT NULL,
      workspace_id bigint,
      created_on timestamptz NOT NULL,
      status text NOT NULL CHECK (status IN ${CAMPAIGN_STATUS}),
      scheduled_start_datetime timestamptz,
      bounces integer,
      campaign_paused boolean,
      campaign_paused_on timestamptz,
      is_generating_schedules boolean,
      is_deleting_schedules boolean,
      archived boolean,
      is_campaign_bounce_blocked boolean,
      started_running_at timestamptz,
      completed_at timestamptz,
      cancelled_at timestamptz,
      selected_contact_lists jsonb,
      reply_to_address text,
      daily_email_limit integer,
      skip_days jsonb,
      single_subject boolean,
      scheduling_strategy text CHECK (scheduling_strategy IN ('testing', 'sequential', 'no-followup-limit', 'smart-queue', 'single-message')),
      from_time time,
      to_time time,
      time_zone text,
      add_unsub_link boolean,
      unsub_link_type text CHECK (unsub_link_type IN ('auto', 'custom')),
      custom_unsub_text text,
      click_tracking_enabled boolean,
      open_tracking_enabled boolean,
      skip_dangerous_emails boolean,
      skip_disposable_emails boolean,
      skip_catchall_emails boolean,
      skip_full_inbox_emails boolean,
      skip_invalid_emails boolean,
      forward_negative_emails boolean,
      forward_netural_emails boolean,
      ${BOOKKEEPING}
    )`,
    sql`CREATE TABLE campaign_sending_domains (
      campaign_uid text NOT NULL,
      domain_id bigint NOT NULL,
      ${BOOKKEEPING},
      PRIMARY KEY (campaign_uid, domain_id)
    )`,
    sql`CREATE TABLE email_sequences (
      id bigint PRIMARY KEY,
      campaign_uid text NOT NULL,
      subject text,
      body text,
      "order" integer,
      next_message_days integer,
      score integer,
      verdict text,
      suggestions jsonb,
      label text CHECK (label IN ('passed', 'blocked', 'rejected', 'approved')),
      blocked_reason text,
      is_flagged_for_approval boolean,
      block_approval boolean,
      email_content_type text CHECK (email_content_type IN ('text/plain', 'text/html', 'text/rich')),
      ${BOOKKEEPING}
    )`,
    sql`CREATE TABLE leads (
      uid text PRIMARY KEY,
      campaign_uid text NOT NULL,
      contact_id bigint NOT NULL,
      sender_email_address text NOT NULL,
      sender_name text NOT NULL,
      ${BOOKKEEPING}
    )`,
    sql`CREATE TABLE contacts (
      id bigint PRIMARY KEY,
      email_id text NOT NULL,
      bounced boolean NOT NULL,
      unsubscribed boolean NOT NULL,
      ${BOOKKEEPING}
    )`,
    sql`CREATE TABLE schedules (
      id bigint PRIMARY KEY,
      lead_uid text NOT NULL,
      campaign_uid text NOT NULL,
      email_sequence_id bigint NOT NULL,
      status text NOT NULL,
      schedule_datetime timestamptz NOT NULL,
      sent_on timestamptz,
      reply_received boolean NOT NULL,
      email_opened boolean NOT NULL,
      email_opened_on timestamptz,
      email_open_count integer NOT NULL,
      ${BOOKKEEPING}
    )`,
    sql`CREATE TABLE replies (
      id bigint PRIMARY KEY,
      campaign_uid text NOT NULL,
      schedule_id bigint NOT NULL,
      lead_uid text,
      body_plain_text text NOT NULL,
      body_html text NOT NULL,
      received_on timestamptz NOT NULL,
      mail_from text,
      subject text,
      reply_classification text NOT NULL CHECK (reply_classification IN ('positive', 'neutral', 'negative')),
      ${BOOKKEEPING}
    )`,
    sql`CREATE TABLE link_clicks (
      link_click_key bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      id bigint UNIQUE,
      campaign_uid text NOT NULL,
      schedule_id bigint NOT NULL,
      link text NOT NULL,
      clicked_on timestamptz NOT NULL,
      ${BOOKKEEPING},
      UNIQUE (schedule_id, link, clicked_on)
    )`,
    sql`CREATE TABLE email_opens (
      email_open_key bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      campaign_uid text NOT NULL,
      schedule_id bigint NOT NULL,
      opened_on timestamptz NOT NULL,
      ${BOOKKEEPING},
      UNIQUE (schedule_id, opened_on)
    )`,
    // Join columns of the views and the day filters of dashboards. link_clicks and
    // email_opens are looked up by schedule_id through their unique keys, which lead with it.
    sql`CREATE INDEX domains_workspace_id_idx ON domains (workspace_id)`,
    sql`CREATE INDEX contact_lists_workspace_id_idx ON contact_lists (workspace_id)`,
    sql`CREATE INDEX campaigns_workspace_id_idx ON campaigns (workspace_id)`,
    sql`CREATE INDEX email_sequences_campaign_uid_idx ON email_sequences (campaign_uid)`,
    sql`CREATE INDEX leads_campaign_uid_idx ON leads (campaign_uid)`,
    sql`CREATE INDEX leads_contact_id_idx ON leads (contact_id)`,
    sql`CREATE INDEX schedules_campaign_uid_idx ON schedules (campaign_uid)`,
    sql`CREATE INDEX schedules_lead_uid_idx ON schedules (lead_uid)`,
    sql`CREATE INDEX schedules_email_sequence_id_idx ON schedules (email_sequence_id)`,
    sql`CREATE INDEX schedules_sent_on_idx ON schedules (sent_on)`,
    sql`CREATE INDEX replies_schedule_id_idx ON replies (schedule_id)`,
    sql`CREATE INDEX replies_campaign_uid_idx ON replies (campaign_uid)`,
    sql`CREATE INDEX replies_received_on_idx ON replies (received_on)`,
    sql`CREATE INDEX link_clicks_campaign_uid_idx ON link_clicks (campaign_uid)`,
    sql`CREATE INDEX link_clicks_clicked_on_idx ON link_clicks (clicked_on)`,
    sql`CREATE INDEX email_opens_campaign_uid_idx ON email_opens (campaign_uid)`,
    sql`CREATE INDEX email_opens_opened_on_idx ON email_opens (opened_on)`,
  ];
  // One statement per query: PGlite runs parameterless SQL through the extended protocol, which takes one statement.
  for (const statement of statements) await statement.execute(db);
}
