import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/warehouse/database.ts";
import { migrateToLatest } from "../../src/warehouse/migrate.ts";
import type { Warehouse } from "../../src/warehouse/connect.ts";
import { useBackends } from "./backends.ts";

const backends = useBackends("migrate");

const ALL_MIGRATIONS = ["0001_synced_tables", "0002_sync_state", "0003_history", "0004_views", "0005_tolerant_ingestion", "0006_verifications", "0007_rhythms_and_freshness", "0008_lead_copies", "0009_detail_observations", "0010_field_issues_by_account", "0011_campaign_deletion_history", "0012_funnel_bounces_and_history_names", "0013_running_runs_index", "0014_runs_with_errors_indexes", "0015_link_click_ids_not_unique", "0016_contacts_follow_lead_changes", "0017_lead_and_reply_observations", "0018_contacts_live_with_their_leads", "0019_verification_scope", "0020_history_names_and_bounce_rate", "0021_contact_retirement_waits_for_holders", "0022_history_dated_by_newest_read", "0023_contact_triggers_pin_search_path", "0024_run_retention_indexes"];

/** A table's column list that the compiler holds to be exactly the keys of its Database type. */
function columns<T>() {
  return <const C extends readonly (keyof T & string)[]>(
    names: C & (Exclude<keyof T, C[number]> extends never ? unknown : { missing: Exclude<keyof T, C[number]> }),
  ): readonly string[] => names;
}

const BOOKKEEPING = ["_extra", "_field_issues", "_synced_at", "_first_seen_at", "_deleted_at"] as const;

/** Contract B: every table and view by name, with its columns and primary key (views have none). */
const CONTRACT: { [T in keyof Database]: { columns: readonly string[]; key: readonly string[] | null } } = {
  workspaces: {
    key: ["id"],
    columns: columns<Database["workspaces"]>()([
      "id", "_account", "created_on", "subscription_plan", "name", "credits_remaining", "next_renewal_date",
      "billing_period", "time_zone", "total_emails_sent", "total_replies_received", ...BOOKKEEPING,
    ]),
  },
  domains: {
    key: ["id"],
    columns: columns<Database["domains"]>()([
      "id", "_account", "workspace_id", "domain", "status", "created_on", "deletion_started_on", "setup_complete",
      "naming_strategy", "custom_name", "warmup_days_remaining", "redirect_subdomains_to", "warmup_active_days", ...BOOKKEEPING,
    ]),
  },
  contact_lists: {
    key: ["uid"],
    columns: columns<Database["contact_lists"]>()([
      "uid", "_account", "workspace_id", "name", "created_on", "status", "source", "available_columns",
      "has_unsubscribe_column", "unsubscribe_column_name", ...BOOKKEEPING,
    ]),
  },
  campaigns: {
    key: ["uid"],
    columns: columns<Database["campaigns"]>()([
      "uid", "_account", "name", "workspace_id", "created_on", "status", "scheduled_start_datetime", "bounces",
      "campaign_paused", "campaign_paused_on", "is_generating_schedules", "is_deleting_schedules", "archived",
      "is_campaign_bounce_blocked", "started_running_at", "completed_at", "cancelled_at", "selected_contact_lists",
      "reply_to_address", "daily_email_limit", "skip_days", "single_subject", "scheduling_strategy", "from_time",
      "to_time", "time_zone", "add_unsub_link", "unsub_link_type", "custom_unsub_text", "click_tracking_enabled",
      "open_tracking_enabled", "skip_dangerous_emails", "skip_disposable_emails", "skip_catchall_emails",
      "skip_full_inbox_emails", "skip_invalid_emails", "forward_negative_emails", "forward_netural_emails", "_observed_at", "_detail_observed_at",
      ...BOOKKEEPING,
    ]),
  },
  campaign_sending_domains: {
    key: ["campaign_uid", "domain_id"],
    columns: columns<Database["campaign_sending_domains"]>()(["campaign_uid", "domain_id", ...BOOKKEEPING]),
  },
  email_sequences: {
    key: ["id"],
    columns: columns<Database["email_sequences"]>()([
      "id", "campaign_uid", "subject", "body", "order", "next_message_days", "score", "verdict", "suggestions", "label",
      "blocked_reason", "is_flagged_for_approval", "block_approval", "email_content_type", ...BOOKKEEPING,
    ]),
  },
  leads: {
    key: ["uid"],
    columns: columns<Database["leads"]>()(["uid", "campaign_uid", "contact_id", "sender_email_address", "sender_name", ...BOOKKEEPING, "_observed_at"]),
  },
  contacts: {
    key: ["id"],
    columns: columns<Database["contacts"]>()(["id", "email_id", "bounced", "unsubscribed", ...BOOKKEEPING, "_observed_at"]),
  },
  schedules: {
    key: ["id"],
    columns: columns<Database["schedules"]>()([
      "id", "lead_uid", "campaign_uid", "email_sequence_id", "status", "schedule_datetime", "sent_on", "reply_received",
      "email_opened", "email_opened_on", "email_open_count", ...BOOKKEEPING, "_observed_at",
    ]),
  },
  replies: {
    key: ["id"],
    columns: columns<Database["replies"]>()([
      "id", "campaign_uid", "schedule_id", "lead_uid", "body_plain_text", "body_html", "received_on", "mail_from",
      "subject", "reply_classification", ...BOOKKEEPING, "_observed_at",
    ]),
  },
  link_clicks: {
    key: ["link_click_key"],
    columns: columns<Database["link_clicks"]>()(["link_click_key", "id", "campaign_uid", "schedule_id", "link", "clicked_on", ...BOOKKEEPING]),
  },
  email_opens: {
    key: ["email_open_key"],
    columns: columns<Database["email_opens"]>()(["email_open_key", "campaign_uid", "schedule_id", "opened_on", ...BOOKKEEPING]),
  },
  campaign_history: {
    key: ["campaign_uid", "valid_from"],
    columns: columns<Database["campaign_history"]>()(["campaign_uid", "valid_from", "valid_to", "status", "settings", "detail_observed_at"]),
  },
  workspace_history: {
    key: ["workspace_id", "valid_from"],
    columns: columns<Database["workspace_history"]>()([
      "workspace_id", "valid_from", "valid_to", "credits_remaining", "total_emails_sent", "total_replies_received",
      "subscription_plan", "billing_period", "next_renewal_date",
    ]),
  },
  domain_history: {
    key: ["domain_id", "valid_from"],
    columns: columns<Database["domain_history"]>()([
      "domain_id", "valid_from", "valid_to", "status", "setup_complete", "warmup_days_remaining", "warmup_active_days",
    ]),
  },
  sync_checkpoints: {
    key: ["account", "campaign_uid", "stream"],
    columns: columns<Database["sync_checkpoints"]>()([
      "account", "campaign_uid", "stream", "cursor_offset", "upstream_total", "fingerprint", "scan_started_at",
      "last_complete_scan_at", "last_run_id", "state", "updated_at",
    ]),
  },
  sync_runs: {
    key: ["id"],
    columns: columns<Database["sync_runs"]>()([
      "id", "account", "scope", "rhythm", "holder", "trigger", "started_at", "finished_at", "outcome", "counts", "requests", "retries", "rejected", "skipped",
      "field_issues", "errors",
    ]),
  },
  rejected_records: {
    key: ["id"],
    columns: columns<Database["rejected_records"]>()([
      "id", "run_id", "account", "stream", "campaign_uid", "reason", "payload", "payload_sha256", "record_key", "parent_key", "skipped",
      "identity", "first_seen_at", "last_seen_at", "times_seen", "resolved_at",
    ]),
  },
  verifications: {
    key: ["id"],
    columns: columns<Database["verifications"]>()([
      "id", "account", "campaign_uid", "trigger", "started_at", "finished_at", "checks", "problems", "requests", "lines",
    ]),
  },
  schedule_engagement: {
    key: null,
    columns: columns<Database["schedule_engagement"]>()([
      "schedule_id", "campaign_uid", "lead_uid", "email_sequence_id", "sent_on", "sent", "opened", "clicked", "replied",
    ]),
  },
  campaign_funnel: {
    key: null,
    columns: columns<Database["campaign_funnel"]>()([
      "campaign_uid", "name", "status", "workspace_id", "leads", "emails_sent", "opened", "clicked", "replied",
      "positive_replies", "neutral_replies", "negative_replies", "bounced", "open_rate", "click_rate", "reply_rate",
      "positive_reply_rate", "bounce_rate",
    ]),
  },
  engagement_daily: {
    key: null,
    columns: columns<Database["engagement_daily"]>()(["campaign_uid", "day", "sends", "opens", "clicks", "replies"]),
  },
  field_issues: {
    key: null,
    columns: columns<Database["field_issues"]>()([
      "table_name", "record_key", "source", "field", "reason", "raw_value", "first_seen_at", "last_seen_at", "account",
    ]),
  },
  event_freshness: {
    key: null,
    columns: columns<Database["event_freshness"]>()(["stream", "campaign_uid", "happened_at", "synced_at", "lag"]),
  },
  sequence_step_performance: {
    key: null,
    columns: columns<Database["sequence_step_performance"]>()([
      "campaign_uid", "email_sequence_id", "order", "subject", "emails_sent", "opened", "clicked", "replied",
      "positive_replies", "open_rate", "click_rate", "reply_rate",
    ]),
  },
};

async function relations(warehouse: Warehouse): Promise<Map<string, { kind: string; columns: string[] }>> {
  const { rows } = await sql<{ name: string; kind: string; columns: string[] }>`
    SELECT c.relname AS name, c.relkind::text AS kind,
           array_agg(a.attname::text ORDER BY a.attnum) AS columns
      FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
     WHERE n.nspname = ${warehouse.schema} AND c.relkind IN ('r', 'v')
     GROUP BY c.relname, c.relkind`.execute(warehouse.db);
  return new Map(rows.map((row) => [row.name, { kind: row.kind, columns: row.columns }]));
}

async function primaryKeys(warehouse: Warehouse): Promise<Map<string, string[]>> {
  const { rows } = await sql<{ name: string; key: string[] }>`
    SELECT c.relname AS name, array_agg(a.attname::text ORDER BY k.position) AS key
      FROM pg_constraint con
      JOIN pg_class c ON c.oid = con.conrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
     CROSS JOIN LATERAL unnest(con.conkey) WITH ORDINALITY AS k(attnum, position)
      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
     WHERE con.contype = 'p' AND n.nspname = ${warehouse.schema}
     GROUP BY c.relname`.execute(warehouse.db);
  return new Map(rows.map((row) => [row.name, row.key]));
}

describe.each(backends)("migrations on $name", (backend) => {
  let warehouse: Warehouse;
  let first: { applied: string[] };
  let second: { applied: string[] };

  beforeAll(async () => {
    warehouse = await backend.open();
    first = await migrateToLatest(warehouse);
    second = await migrateToLatest(warehouse);
    return () => warehouse.destroy();
  });

  it("apply every migration to an empty warehouse, and nothing on a second run", () => {
    expect(first.applied).toEqual(ALL_MIGRATIONS);
    expect(second.applied).toEqual([]);
  });

  it("create every table and view of the contract, with its columns and primary key", async () => {
    const found = await relations(warehouse);
    const keys = await primaryKeys(warehouse);
    for (const [name, expected] of Object.entries(CONTRACT)) {
      const relation = found.get(name);
      expect(relation, name).toBeDefined();
      expect(relation?.kind, name).toBe(expected.key === null ? "v" : "r");
      expect([...(relation?.columns ?? [])].sort(), name).toEqual([...expected.columns].sort());
      if (expected.key !== null) expect(keys.get(name), name).toEqual(expected.key);
    }
  });

  it("put everything in the warehouse schema, including Kysely's migration table", async () => {
    const { rows } = await sql<{ schema: string; relation: string }>`
      SELECT n.nspname AS schema, c.relname AS relation
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE c.relname IN ('kysely_migration', 'campaigns', 'campaign_funnel')`.execute(warehouse.db);
    expect(rows.map((row) => row.schema)).toEqual(["coldsync", "coldsync", "coldsync"]);
    const publicRelations = await sql<{ count: number }>`
      SELECT count(*) AS count FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'`.execute(warehouse.db);
    expect(publicRelations.rows[0]?.count).toBe(0);
  });

  it.runIf(backend.name === "postgres")("open sessions that do not wait for each commit's WAL flush", async () => {
    const { rows } = await sql<{ synchronous_commit: string }>`SHOW synchronous_commit`.execute(warehouse.db);
    expect(rows[0]?.synchronous_commit).toBe("off");
  });

  it("let concurrent callers race without failing or applying anything twice", async () => {
    const first = await backend.open("racing");
    // PostgreSQL: two pools, as two processes would have. PGlite holds its directory alone, so callers share one instance.
    const second = backend.name === "postgres" ? await backend.open("racing") : first;
    try {
      const results = await Promise.all([migrateToLatest(first), migrateToLatest(second)]);
      const applied = results.map((result) => result.applied).sort((a, b) => b.length - a.length);
      expect(applied).toEqual([ALL_MIGRATIONS, []]);
      const { rows } = await sql<{ name: string }>`SELECT name FROM racing.kysely_migration ORDER BY name`.execute(first.db);
      expect(rows.map((row) => row.name)).toEqual(ALL_MIGRATIONS);
    } finally {
      await first.destroy();
      if (second !== first) await second.destroy();
    }
  });
});
