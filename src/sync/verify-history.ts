import { sql, type Kysely, type RawBuilder } from "kysely";
import { campaignSettings } from "../upstream/resources.ts";
import type { Database } from "../warehouse/database.ts";
import { keyList } from "./key-list.ts";
import type { VerifyLine } from "./verify.ts";

/**
 * The history tables against the rows they keep the history of: every live
 * workspace, domain and campaign has one open history row (valid_to null),
 * and it holds the row's current values. The triggers that keep the history
 * (migrations 0003, 0011, 0012) write it in the same statement as the row, so
 * a disagreement is damage to the warehouse, not an upstream that moved; no
 * request is made. A campaign's open row is compared by its status and its
 * settings but the name, which merges the listing's name with the detail's
 * (migrations/0020). A line only for a history that disagrees, naming the rows and, per column,
 * how many (`open row`: none, or more than one, is open).
 */

interface HistoryRule {
  /** The table whose rows have a history, and the line's stream. */
  table: "workspaces" | "domains" | "campaigns";
  history: "workspace_history" | "domain_history" | "campaign_history";
  /** The history's column naming the row, and the row's key. */
  historyKey: string;
  rowKey: string;
  /** Columns the open history row holds as the row does. */
  columns: readonly string[];
  /** Other values the open row `h` holds as the row `r` does, each a condition true when they differ, by name. */
  derived?: Readonly<Record<string, RawBuilder<unknown>>>;
}

/** The settings a campaign's version holds (record_campaign_history, migrations/0022): the detail's, but the name. */
const VERSIONED_SETTINGS = Object.keys(campaignSettings.shape).filter((setting) => setting !== "name");

/**
 * Whether a campaign's open version holds other settings than the campaign `r`: each setting is the row's column of
 * the same name, as record_campaign_history writes it, its sending domains those it held at its last detail read;
 * its name may be the listing's or the detail's, so it is left out. Every setting is compared, so a version that
 * lost one (or holds one more) differs too.
 */
const CAMPAIGN_SETTINGS_DIFFER = sql`(h.settings - 'name') IS DISTINCT FROM (
    SELECT jsonb_object_agg(setting, CASE WHEN setting = 'sending_domains'
        THEN COALESCE((SELECT jsonb_agg(d.domain_id ORDER BY d.domain_id) FROM campaign_sending_domains d
                        WHERE d.campaign_uid = r.uid AND (d._deleted_at IS NULL OR d._deleted_at > r._detail_observed_at)), '[]'::jsonb)
        ELSE to_jsonb(r) -> setting END)
      FROM unnest(ARRAY[${sql.join(VERSIONED_SETTINGS.map((setting) => sql.lit(setting)))}]::text[]) AS setting)`;

const RULES: readonly HistoryRule[] = [
  {
    table: "workspaces",
    history: "workspace_history",
    historyKey: "workspace_id",
    rowKey: "id",
    columns: ["credits_remaining", "total_emails_sent", "total_replies_received", "subscription_plan", "billing_period", "next_renewal_date"],
  },
  { table: "domains", history: "domain_history", historyKey: "domain_id", rowKey: "id", columns: ["status", "setup_complete", "warmup_days_remaining", "warmup_active_days"] },
  { table: "campaigns", history: "campaign_history", historyKey: "campaign_uid", rowKey: "uid", columns: ["status"], derived: { settings: CAMPAIGN_SETTINGS_DIFFER } },
];

const OPEN_ROW = "open row";

export async function historyLines(db: Kysely<Database>, account: string, campaignUid: string | undefined): Promise<VerifyLine[]> {
  const lines: VerifyLine[] = [];
  for (const rule of campaignUid === undefined ? RULES : RULES.filter((each) => each.table === "campaigns")) {
    const line = await historyLine(db, rule, account, campaignUid === undefined ? sql`` : sql`AND r.uid = ${campaignUid}`);
    if (line !== undefined) lines.push({ ...line, campaignUid: campaignUid ?? null });
  }
  return lines;
}

async function historyLine(db: Kysely<Database>, rule: HistoryRule, account: string, only: RawBuilder<unknown>): Promise<VerifyLine | undefined> {
  const differing = [
    ...rule.columns.map((column) => sql`CASE WHEN h.${sql.id(column)} IS DISTINCT FROM r.${sql.id(column)} THEN ${column} END`),
    ...Object.entries(rule.derived ?? {}).map(([name, differs]) => sql`CASE WHEN ${differs} THEN ${name} END`),
  ];
  const { rows } = await sql<{ key: string; open_rows: number; columns: string[] }>`
    SELECT r.${sql.id(rule.rowKey)}::text AS key, count(DISTINCT h.valid_from)::int AS open_rows,
           coalesce(array_agg(x.column_name) FILTER (WHERE x.column_name IS NOT NULL), '{}') AS columns
      FROM ${sql.id(rule.table)} r
      LEFT JOIN ${sql.id(rule.history)} h ON h.${sql.id(rule.historyKey)} = r.${sql.id(rule.rowKey)} AND h.valid_to IS NULL
      LEFT JOIN LATERAL unnest(ARRAY[${sql.join(differing)}]::text[]) AS x(column_name) ON true
     WHERE r._account = ${account} AND r._deleted_at IS NULL ${only}
     GROUP BY r.${sql.id(rule.rowKey)}
    HAVING count(DISTINCT h.valid_from) <> 1 OR count(x.column_name) > 0
     ORDER BY 1`.execute(db);
  if (rows.length === 0) return undefined;
  const columns: Record<string, number> = {};
  for (const row of rows) {
    const named = row.open_rows === 1 ? new Set(row.columns) : [OPEN_ROW];
    for (const column of named) columns[column] = (columns[column] ?? 0) + 1;
  }
  const { rows: live } = await sql<{ rows: number }>`
    SELECT count(*)::int AS rows FROM ${sql.id(rule.table)} r WHERE r._account = ${account} AND r._deleted_at IS NULL ${only}`.execute(db);
  const looked = live[0]?.rows ?? 0;
  const keys = rows.map((row) => row.key);
  // As a values line counts: the live rows looked at, and those whose history agrees.
  return { campaignUid: null, stream: rule.table, table: rule.history, status: "differs", upstream: looked, warehouse: looked - keys.length, rejected: 0, differingKeys: keyList(keys), columns };
}
