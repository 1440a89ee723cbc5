import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { openWarehouse } from "../../src/warehouse/connect.ts";
import { runColdsync } from "../support/cli.ts";
import { useTestDatabase } from "../support/database.ts";

/**
 * What a connection is set to whatever the settings carry: the warehouse schema first on the search path when
 * DATABASE_URL brings session options of its own (node-postgres takes a URL's `options` over the pool's, and every
 * table landed in public), and a schema named like a reserved word on the embedded warehouse.
 */

const databaseUrl = useTestDatabase("connect_settings");
const directories: string[] = [];

afterAll(async () => {
  await Promise.all(directories.map((directory) => rm(directory, { recursive: true, force: true })));
});

function withOptions(url: string, options: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set("options", options);
  return parsed.href;
}

async function relationsBySchema(url: string): Promise<Record<string, string[]>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ schema: string; relation: string }>(
      `SELECT n.nspname AS schema, c.relname AS relation FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'v') AND n.nspname IN ('public', 'acme', 'bravo') ORDER BY 1, 2`,
    );
    const bySchema: Record<string, string[]> = {};
    for (const row of rows) (bySchema[row.schema] ??= []).push(row.relation);
    return bySchema;
  } finally {
    await client.end();
  }
}

describe("a DATABASE_URL that carries ?options=", () => {
  it("keeps its options and the warehouse's own: its schema first on the search path, its session settings", async () => {
    const warehouse = await openWarehouse({ databaseUrl: withOptions(databaseUrl(), "-c statement_timeout=4321 -c search_path=public"), dataDir: ".coldsync", schema: "acme" });
    try {
      const settings = await sql<{ search_path: string; statement_timeout: string; jit: string }>`
        select current_setting('search_path') as search_path, current_setting('statement_timeout') as statement_timeout, current_setting('jit') as jit`.execute(warehouse.db);
      expect(settings.rows).toEqual([{ search_path: "acme", statement_timeout: "4321ms", jit: "off" }]);
    } finally {
      await warehouse.destroy();
    }
  });

  it("migrates each account into its COLDSYNC_SCHEMA, nothing into public", async () => {
    const url = withOptions(databaseUrl(), "-c statement_timeout=0");
    for (const schema of ["acme", "bravo"]) {
      const outcome = await runColdsync(["migrate"], { DATABASE_URL: url, COLDSYNC_SCHEMA: schema });
      expect({ schema, code: outcome.code, stderr: outcome.stderr }).toEqual({ schema, code: 0, stderr: "" });
    }
    const found = await relationsBySchema(databaseUrl());
    expect(found.public ?? []).toEqual([]);
    for (const schema of ["acme", "bravo"]) expect(found[schema]).toEqual(expect.arrayContaining(["campaigns", "campaign_funnel", "kysely_migration", "sync_runs"]));
  }, 60_000);
});

describe("the embedded warehouse under a COLDSYNC_SCHEMA that is a reserved word", () => {
  it("is migrated into that schema and queried there", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "coldsync-connect-settings-"));
    directories.push(dataDir);
    const env = { COLDSYNC_DATA_DIR: dataDir, COLDSYNC_SCHEMA: "user" };
    const migrated = await runColdsync(["migrate"], env, { timeoutMs: 60_000 });
    expect({ code: migrated.code, stderr: migrated.stderr }).toEqual({ code: 0, stderr: "" });
    const query = await runColdsync(["sql", "SELECT count(*) AS campaigns FROM campaigns", "--json"], env);
    expect({ code: query.code, stdout: query.stdout.trim(), stderr: query.stderr }).toEqual({ code: 0, stdout: '{"campaigns":"0"}', stderr: "" });
  }, 60_000);
});
