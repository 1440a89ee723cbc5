import type { ColumnType, Generated, JSONColumnType } from "kysely";

/**
 * The warehouse as Kysely sees it (contract B; docs/warehouse.md describes
 * every column). The migrations under migrations/ are the source of truth;
 * test/warehouse/migrate.test.ts holds these shapes and the migrated catalog to the same columns.
 *
 * Both backends read bigint and numeric as JS numbers (see connect.ts), so ids,
 * counts and rates are `number` here, and dates (`day`) as YYYY-MM-DD strings.
 *
 * Upstream fields outside the keys are nullable: a field that deviates from
 * the spec and cannot be read is stored as NULL (migration 0005), and enums
 * the upstream owns are plain text, since it may add values.
 */

/**
 * Read as Date; written as a Date or an ISO 8601 string. Upstream date-times
 * are written as canonical instant text (src/upstream/instant.ts), which keeps
 * their microseconds.
 */
export type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** When a copy was read; optional on insert, where the column's default ('-infinity') loses to any copy. */
export type CopyObservedAt = ColumnType<Date, Date | string | undefined, Date | string>;

/**
 * jsonb columns of synced tables hold any JSON value. They are written only
 * through upsert(), which sends whole rows as one JSON document, so they take
 * plain values (an array stays an array, not a PostgreSQL array literal).
 */
export type Json = unknown;

/** Bookkeeping columns that every synced table carries (contract B). */
export interface SyncedColumns {
  /** Upstream fields the spec does not know, merged key by key across sources. */
  _extra: Json | null;
  /**
   * Fields that deviated from the spec, per source (the stream that read the record), per dotted field
   * path: `{reason, raw, first_seen_at}`. Null for a clean row. Merged by merge_field_issues().
   */
  _field_issues: Json | null;
  /** Last time a sync wrote the row (insert or an actual change). */
  _synced_at: Timestamp;
  _first_seen_at: Timestamp;
  /** Set when the record is no longer returned upstream; cleared when it comes back. */
  _deleted_at: Timestamp | null;
}

export interface WorkspacesTable extends SyncedColumns {
  id: number;
  _account: string;
  created_on: Timestamp | null;
  subscription_plan: string | null;
  name: string | null;
  credits_remaining: number | null;
  next_renewal_date: Timestamp | null;
  billing_period: string | null;
  time_zone: string | null;
  total_emails_sent: number | null;
  total_replies_received: number | null;
}

export interface DomainsTable extends SyncedColumns {
  id: number;
  _account: string;
  workspace_id: number | null;
  domain: string | null;
  status: string | null;
  created_on: Timestamp | null;
  deletion_started_on: Timestamp | null;
  setup_complete: boolean | null;
  naming_strategy: string | null;
  custom_name: string | null;
  warmup_days_remaining: number | null;
  redirect_subdomains_to: string | null;
  warmup_active_days: number | null;
}

export interface ContactListsTable extends SyncedColumns {
  uid: string;
  _account: string;
  workspace_id: number | null;
  name: string | null;
  created_on: Timestamp | null;
  status: string | null;
  source: string | null;
  available_columns: Json | null;
  has_unsubscribe_column: boolean | null;
  unsubscribe_column_name: string | null;
}

/**
 * The listing (#1) fills uid, name, workspace_id, created_on and status; the
 * retrieve (#2) fills the rest, which is why the rest is nullable.
 */
export interface CampaignsTable extends SyncedColumns {
  uid: string;
  _account: string;
  name: string | null;
  workspace_id: number | null;
  created_on: Timestamp | null;
  status: string | null;
  scheduled_start_datetime: Timestamp | null;
  bounces: number | null;
  campaign_paused: boolean | null;
  campaign_paused_on: Timestamp | null;
  is_generating_schedules: boolean | null;
  is_deleting_schedules: boolean | null;
  archived: boolean | null;
  is_campaign_bounce_blocked: boolean | null;
  started_running_at: Timestamp | null;
  completed_at: Timestamp | null;
  cancelled_at: Timestamp | null;
  selected_contact_lists: Json | null;
  reply_to_address: string | null;
  daily_email_limit: number | null;
  skip_days: Json | null;
  single_subject: boolean | null;
  scheduling_strategy: string | null;
  /** time of day, HH:MM:SS */
  from_time: string | null;
  to_time: string | null;
  time_zone: string | null;
  add_unsub_link: boolean | null;
  unsub_link_type: string | null;
  custom_unsub_text: string | null;
  click_tracking_enabled: boolean | null;
  open_tracking_enabled: boolean | null;
  skip_dangerous_emails: boolean | null;
  skip_disposable_emails: boolean | null;
  skip_catchall_emails: boolean | null;
  skip_full_inbox_emails: boolean | null;
  skip_invalid_emails: boolean | null;
  forward_negative_emails: boolean | null;
  forward_netural_emails: boolean | null;
  /** When the newest request (listing or detail) that read this row was sent; an older one never overwrites the summary columns. */
  _observed_at: Timestamp;
  /** When the newest detail read was sent; it orders the columns only the detail carries. Null until the first. */
  _detail_observed_at: Timestamp | null;
}

export interface CampaignSendingDomainsTable extends SyncedColumns {
  campaign_uid: string;
  domain_id: number;
}

/** A schedule's email_data gives only id, subject, body and email_content_type; #9 gives the rest. */
export interface EmailSequencesTable extends SyncedColumns {
  id: number;
  campaign_uid: string;
  subject: string | null;
  body: string | null;
  order: number | null;
  next_message_days: number | null;
  score: number | null;
  verdict: string | null;
  suggestions: Json | null;
  label: string | null;
  blocked_reason: string | null;
  is_flagged_for_approval: boolean | null;
  block_approval: boolean | null;
  email_content_type: string | null;
}

export interface LeadsTable extends SyncedColumns {
  uid: string;
  campaign_uid: string;
  contact_id: number | null;
  sender_email_address: string | null;
  sender_name: string | null;
  /** When the read (listing or lookup) that last changed this row was made (migrations/0017). */
  _observed_at: CopyObservedAt;
}

export interface ContactsTable extends SyncedColumns {
  id: number;
  email_id: string | null;
  bounced: boolean | null;
  unsubscribed: boolean | null;
  /** When the copy that last changed this row was read (a lead's contact, migrations/0008). */
  _observed_at: CopyObservedAt;
}

export interface SchedulesTable extends SyncedColumns {
  id: number;
  lead_uid: string;
  campaign_uid: string;
  /** email_data.id */
  email_sequence_id: number | null;
  status: string | null;
  schedule_datetime: Timestamp | null;
  sent_on: Timestamp | null;
  reply_received: boolean | null;
  email_opened: boolean | null;
  email_opened_on: Timestamp | null;
  email_open_count: number | null;
  /** When the copy that last changed this row was read (a lead's schedule, migrations/0008). */
  _observed_at: CopyObservedAt;
}

/** The listing (#13) brings mail_from and subject; a schedule's copy brings lead_uid. */
export interface RepliesTable extends SyncedColumns {
  id: number;
  campaign_uid: string;
  schedule_id: number;
  lead_uid: string | null;
  body_plain_text: string | null;
  body_html: string | null;
  received_on: Timestamp | null;
  mail_from: string | null;
  subject: string | null;
  reply_classification: string | null;
  /** When the read (listing or a schedule's copy) that last changed the columns both carry was made (migrations/0017). */
  _observed_at: CopyObservedAt;
}

/** Natural key (schedule_id, link, clicked_on); `id` is known only from a schedule's copy. */
export interface LinkClicksTable extends SyncedColumns {
  link_click_key: Generated<number>;
  id: number | null;
  campaign_uid: string;
  schedule_id: number;
  link: string;
  clicked_on: Timestamp;
}

export interface EmailOpensTable extends SyncedColumns {
  email_open_key: Generated<number>;
  campaign_uid: string;
  schedule_id: number;
  opened_on: Timestamp;
}

/** History rows are written by triggers, never by the application. */
export interface CampaignHistoryTable {
  campaign_uid: string;
  valid_from: Timestamp;
  valid_to: Timestamp | null;
  status: string | null;
  /** The flattened settings (name included) and `sending_domains`, as of valid_from. */
  settings: Json;
  /** The detail read the settings came from (`campaigns._detail_observed_at` then); null for versions before 0020. */
  detail_observed_at: Timestamp | null;
}

export interface WorkspaceHistoryTable {
  workspace_id: number;
  valid_from: Timestamp;
  valid_to: Timestamp | null;
  credits_remaining: number | null;
  total_emails_sent: number | null;
  total_replies_received: number | null;
  subscription_plan: string | null;
  billing_period: string | null;
  next_renewal_date: Timestamp | null;
}

export interface DomainHistoryTable {
  domain_id: number;
  valid_from: Timestamp;
  valid_to: Timestamp | null;
  status: string | null;
  setup_complete: boolean | null;
  warmup_days_remaining: number | null;
  warmup_active_days: number | null;
}

export interface SyncCheckpointsTable {
  account: string;
  /** '' for account-level streams. */
  campaign_uid: string;
  stream: string;
  cursor_offset: ColumnType<number, number | undefined, number>;
  upstream_total: number | null;
  fingerprint: string | null;
  scan_started_at: Timestamp | null;
  last_complete_scan_at: Timestamp | null;
  last_run_id: number | null;
  state: JSONColumnType<Record<string, unknown>, string | undefined, string>;
  updated_at: Timestamp;
}

export type RunTrigger = "cli" | "worker" | "demo";
export type RunOutcome = "running" | "succeeded" | "partial" | "failed" | "aborted";

/** Per stream: how many records were fetched, rows written, records rejected. */
export type RunCounts = Record<string, { fetched: number; written: number; rejected: number }>;

export interface SyncRunsTable {
  id: Generated<number>;
  account: string;
  /** The campaign uid when the run was limited to one campaign. */
  scope: string | null;
  /** For a campaign's run: which rhythm (`leads` or `events`); null for a run of everything. */
  rhythm: "leads" | "events" | null;
  /** The run lock its process holds while it runs: a `running` row whose lock nobody holds is abandoned. */
  holder: string | null;
  trigger: RunTrigger;
  started_at: Timestamp;
  finished_at: Timestamp | null;
  outcome: ColumnType<RunOutcome, RunOutcome | undefined, RunOutcome>;
  counts: JSONColumnType<RunCounts, string | undefined, string>;
  requests: ColumnType<number, number | undefined, number>;
  retries: ColumnType<number, number | undefined, number>;
  rejected: ColumnType<number, number | undefined, number>;
  /** Records below a rejected one that could not be placed because it could not. */
  skipped: ColumnType<number, number | undefined, number>;
  /** Fields that deviated, counted per `table.field` (array positions as `*`). */
  field_issues: JSONColumnType<Record<string, number>, string | undefined, string>;
  errors: JSONColumnType<unknown[], string | undefined, string>;
}

/**
 * Records that could not be placed (a key field missing or unusable), written
 * through recordRejected(): one row per (account, stream, identity), where the
 * identity is the campaign plus the readable part of the key, or the payload's
 * hash when nothing of the key could be read.
 */
export interface RejectedRecordsTable {
  id: Generated<number>;
  run_id: number | null;
  account: string;
  stream: string;
  campaign_uid: string | null;
  reason: string;
  payload: Json;
  payload_sha256: string;
  /** The key fields that could be read, `field=value|…`, or null. */
  record_key: string | null;
  /** For a rejected part of a record (a schedule without an id): the key of the record it came in. */
  parent_key: string | null;
  /** Records below it in the payload that could not be placed because it could not. */
  skipped: number;
  identity: string;
  first_seen_at: Timestamp;
  last_seen_at: Timestamp;
  times_seen: number;
  /** Set when a complete read of its scope no longer met it (fixed or gone upstream); cleared if it comes back. */
  resolved_at: Timestamp | null;
}

/** One row per verification (`coldsync verify`, or the worker's periodic one): the lines that were not ok. */
export interface VerificationsTable {
  id: Generated<number>;
  account: string;
  /** The campaign a `verify --campaign` checked; null for the whole account. */
  campaign_uid: string | null;
  trigger: RunTrigger;
  started_at: Timestamp;
  finished_at: Timestamp;
  /** Lines checked. */
  checks: number;
  /** Lines that were not ok. */
  problems: number;
  requests: number;
  /** The lines that were not ok, as `coldsync verify --json` prints them. */
  lines: JSONColumnType<unknown[], string, string>;
}

/** Views read as numbers; rates are NULL when their denominator is 0. */
export interface CampaignFunnelView {
  campaign_uid: string;
  name: string;
  status: string;
  workspace_id: number | null;
  leads: number;
  emails_sent: number;
  opened: number;
  clicked: number;
  replied: number;
  positive_replies: number;
  neutral_replies: number;
  negative_replies: number;
  /** The campaign's bounced emails as the upstream counts them (`campaigns.bounces`); NULL until a detail read says. */
  bounced: number | null;
  open_rate: number | null;
  click_rate: number | null;
  reply_rate: number | null;
  positive_reply_rate: number | null;
  bounce_rate: number | null;
}

export interface EngagementDailyView {
  campaign_uid: string;
  /** UTC calendar day, YYYY-MM-DD. */
  day: string;
  sends: number;
  opens: number;
  clicks: number;
  replies: number;
}

export interface SequenceStepPerformanceView {
  campaign_uid: string;
  email_sequence_id: number;
  order: number | null;
  subject: string | null;
  emails_sent: number;
  opened: number;
  clicked: number;
  replied: number;
  positive_replies: number;
  open_rate: number | null;
  click_rate: number | null;
  reply_rate: number | null;
}

/** One line per live row and deviating field (migration 0005). */
export interface FieldIssuesView {
  table_name: string;
  /** The row's natural key as text (composite keys joined with "|"). */
  record_key: string;
  /** The stream that read the deviating value (a record read by two endpoints can deviate in each). */
  source: string;
  /** Dotted path inside the upstream record, e.g. `settings.daily_email_limit`. */
  field: string;
  reason: string;
  raw_value: Json;
  first_seen_at: Date;
  /** The end of the latest run of the account that met this kind of issue (table and field). */
  last_seen_at: Date | null;
  /** The account the row belongs to (`_account`, its campaign's, or for a contact a lead's campaign's). */
  account: string | null;
}

/** Per event: how long it took to reach the warehouse. */
export interface EventFreshnessView {
  stream: "replies" | "link_clicks" | "email_opens";
  campaign_uid: string;
  /** The event's own time: received_on, clicked_on, opened_on. */
  happened_at: Date;
  /** When the warehouse first held it (_first_seen_at). */
  synced_at: Date;
  /** synced_at - happened_at, as a PostgreSQL interval (read as text). */
  lag: string;
}

/** One row per live schedule with its engagement flags; the funnel views build on it. */
export interface ScheduleEngagementView {
  schedule_id: number;
  campaign_uid: string;
  lead_uid: string;
  email_sequence_id: number;
  sent_on: Date | null;
  sent: boolean;
  opened: boolean;
  clicked: boolean;
  replied: boolean;
}

export interface Database {
  workspaces: WorkspacesTable;
  domains: DomainsTable;
  contact_lists: ContactListsTable;
  campaigns: CampaignsTable;
  campaign_sending_domains: CampaignSendingDomainsTable;
  email_sequences: EmailSequencesTable;
  leads: LeadsTable;
  contacts: ContactsTable;
  schedules: SchedulesTable;
  replies: RepliesTable;
  link_clicks: LinkClicksTable;
  email_opens: EmailOpensTable;
  campaign_history: CampaignHistoryTable;
  workspace_history: WorkspaceHistoryTable;
  domain_history: DomainHistoryTable;
  sync_checkpoints: SyncCheckpointsTable;
  sync_runs: SyncRunsTable;
  rejected_records: RejectedRecordsTable;
  verifications: VerificationsTable;
  schedule_engagement: ScheduleEngagementView;
  field_issues: FieldIssuesView;
  event_freshness: EventFreshnessView;
  campaign_funnel: CampaignFunnelView;
  engagement_daily: EngagementDailyView;
  sequence_step_performance: SequenceStepPerformanceView;
}
