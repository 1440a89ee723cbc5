import { execFile } from "node:child_process";
import { promisify } from "node:util";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { runColdsync } from "../support/cli.ts";
import { useTestDatabase } from "../support/database.ts";

const run = promisify(execFile);

/**
 * `coldsync migrate` as a user runs it, through bin/coldsync.js. The embedded
 * backend runs the same migrateToLatest (migrate.test.ts covers it on PGlite).
 */
async function migrate(env: Record<string, string>): Promise<string> {
  const { stdout } = await run(process.execPath, ["bin/coldsync.js", "migrate"], { env: { PATH: process.env.PATH ?? "", ...env } });
  return stdout;
}

const databaseUrl = useTestDatabase("migrate_command");

describe("coldsync migrate", () => {
  it("applies the migrations into COLDSYNC_SCHEMA, then says the warehouse is up to date", async () => {
    const env = { DATABASE_URL: databaseUrl(), COLDSYNC_SCHEMA: "bi" };
    expect((await migrate(env)).trim().split("\n")).toEqual([
      "applied 0001_synced_tables (schema bi)",
      "applied 0002_sync_state (schema bi)",
      "applied 0003_history (schema bi)",
      "applied 0004_views (schema bi)",
      "applied 0005_tolerant_ingestion (schema bi)",
      "applied 0006_verifications (schema bi)",
      "applied 0007_rhythms_and_freshness (schema bi)",
      "applied 0008_lead_copies (schema bi)",
      "applied 0009_detail_observations (schema bi)",
      "applied 0010_field_issues_by_account (schema bi)",
      "applied 0011_campaign_deletion_history (schema bi)",
      "applied 0012_funnel_bounces_and_history_names (schema bi)",
      "applied 0013_running_runs_index (schema bi)",
      "applied 0014_runs_with_errors_indexes (schema bi)",
      "applied 0015_link_click_ids_not_unique (schema bi)",
      "applied 0016_contacts_follow_lead_changes (schema bi)",
      "applied 0017_lead_and_reply_observations (schema bi)",
      "applied 0018_contacts_live_with_their_leads (schema bi)",
      "applied 0019_verification_scope (schema bi)",
      "applied 0020_history_names_and_bounce_rate (schema bi)",
      "applied 0021_contact_retirement_waits_for_holders (schema bi)",
      "applied 0022_history_dated_by_newest_read (schema bi)",
      "applied 0023_contact_triggers_pin_search_path (schema bi)",
      "applied 0024_run_retention_indexes (schema bi)",
    ]);
    expect((await migrate(env)).trim()).toBe("warehouse up to date (schema bi)");
  });

  it("refuses a warehouse a newer release migrated (a rollback), as the commands that only check do, naming what it does not know", async () => {
    const env = { DATABASE_URL: databaseUrl(), COLDSYNC_SCHEMA: "rolled_back" };
    await migrate(env);
    const client = new pg.Client({ connectionString: databaseUrl() });
    await client.connect();
    try {
      await client.query(`INSERT INTO rolled_back.kysely_migration (name, timestamp) VALUES ('0999_from_a_newer_release', '2026-12-01T00:00:00.000Z')`);
    } finally {
      await client.end();
    }
    const refusal = `coldsync: the warehouse schema "rolled_back" was migrated by a newer coldsync (0999_from_a_newer_release, unknown to this release); run that release or a later one: migrations are forward-only`;
    for (const command of ["migrate", "status"]) {
      const outcome = await runColdsync([command], env);
      expect({ command, code: outcome.code, stderr: outcome.stderr.trim() }).toEqual({ command, code: 1, stderr: refusal });
    }
  });
});
