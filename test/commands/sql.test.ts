import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, runColdsync } from "../support/cli.ts";
import { useTestDatabase } from "../support/database.ts";

/** `coldsync sql`: ad-hoc queries on the warehouse the demo (or a sync) wrote, above all the embedded one. */

const databaseUrl = useTestDatabase("sql_command");
const scratch = mkdtempSync(join(tmpdir(), "sql-command-"));
let env: Record<string, string>;

beforeAll(async () => {
  env = { DATABASE_URL: databaseUrl(), COLDSYNC_SCHEMA: "sql_demo" };
  const demo = await runColdsync(["demo"], env);
  expect(demo.code, demo.stderr).toBe(0);
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const leadCount = async () => {
  const counted = await runColdsync(["sql", "--json", "SELECT count(*)::int AS leads FROM leads"], env);
  return (JSON.parse(counted.stdout) as { leads: number }).leads;
};

describe("coldsync sql", () => {
  it("prints a query's rows as a table, in the warehouse's schema, with their count", async () => {
    const outcome = await runColdsync(["sql", "SELECT name, status FROM campaigns ORDER BY uid LIMIT 2"], env);
    expect([outcome.code, outcome.stderr]).toEqual([0, ""]);
    expect(outcome.stdout).toMatch(/│ name +│ status +│/);
    expect(outcome.stdout.trim().split("\n").at(-1)).toBe("(2 rows)");
    // No rows still names the columns, as psql does.
    const none = (await runColdsync(["sql", "SELECT 1 AS one WHERE false"], env)).stdout.trim().split("\n");
    expect([none.some((line) => /│ one │/.test(line)), none.at(-1)]).toEqual([true, "(0 rows)"]);
  });

  it("prints one JSON object per row with --json, and reads the query from standard input when none is given", async () => {
    const outcome = await runColdsync(["sql", "--json"], env, { input: "SELECT 1 AS one, NULL AS nothing, '{\"a\":[1]}'::jsonb AS document\nUNION ALL SELECT 2, NULL, NULL" });
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stdout.trim().split("\n").map((line) => JSON.parse(line) as unknown)).toEqual([
      { one: 1, nothing: null, document: { a: [1] } },
      { one: 2, nothing: null, document: null },
    ]);
    expect(await leadCount()).toBeGreaterThan(0);
  });

  it("changes nothing: a write is refused, and so is a second statement that would leave the read-only transaction", async () => {
    const before = await leadCount();
    const deleted = await runColdsync(["sql", "DELETE FROM leads"], env);
    expect([deleted.code, deleted.stderr.trim()]).toEqual([1, "coldsync: cannot execute DELETE in a read-only transaction"]);
    const escaped = await runColdsync(["sql", "COMMIT; DELETE FROM leads"], env);
    expect([escaped.code, escaped.stderr.trim()]).toEqual([1, "coldsync: one statement at a time (cannot insert multiple commands into a prepared statement)"]);
    expect(await leadCount()).toBe(before);
  });

  it("keeps every column, however many share a name, and every digit of a bigint", async () => {
    const outcome = await runColdsync(["sql", "SELECT 1 AS id, 2 AS id, 9007199254740993::bigint AS big, 0.1000000000000000055511::numeric AS wide"], env);
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stdout).toMatch(/│ id +│ id +│ big +│ wide +│/);
    expect(outcome.stdout).toMatch(/│ 1 +│ 2 +│ 9007199254740993 +│ 0\.1000000000000000055511 +│/);
    const json = await runColdsync(["sql", "--json", "SELECT 1 AS id, 2 AS id, 3 AS id, 9007199254740993::bigint AS big"], env);
    expect(JSON.parse(json.stdout) as unknown).toEqual({ id: 1, "id:2": 2, "id:3": 3, big: "9007199254740993" });
  });

  it("takes a query that begins with a comment, as it is, after -- or on standard input", async () => {
    const query = "-- the funnel's first row\nSELECT 1 AS one";
    for (const outcome of [
      await runColdsync(["sql", "--json", query], env),
      await runColdsync(["sql", query, "--json"], env),
      await runColdsync(["sql", "--json", query, "--"], env),
      await runColdsync(["sql", "--json", "--", query], env),
      await runColdsync(["sql", "--json"], env, { input: query }),
    ]) {
      expect([outcome.code, outcome.stdout.trim()], outcome.stderr).toEqual([0, '{"one":1}']);
    }
  });

  it("says what is wrong with a query, or with its absence", async () => {
    const typo = await runColdsync(["sql", "SELEC 1"], env);
    expect([typo.code, typo.stderr.trim()]).toEqual([1, 'coldsync: syntax error at or near "SELEC"']);
    const empty = await runColdsync(["sql", " "], env);
    expect([empty.code, empty.stderr.trim()]).toEqual([1, "coldsync: no query: give it as the argument, or on standard input"]);
  });

  it("queries the embedded warehouse, which no other client can open, by the same rules", async () => {
    const embedded = { COLDSYNC_DATA_DIR: join(scratch, "data") };
    const options = { cwd: scratch };
    expect((await runColdsync(["sql", "SELECT 1"], embedded, options)).stderr.trim()).toMatch(/^coldsync: no embedded warehouse in .*; run `coldsync migrate` first$/);
    expect((await runColdsync(["migrate"], embedded, options)).code).toBe(0);
    const counted = await runColdsync(["sql", "--json", "SELECT count(*)::int AS campaigns, 9007199254740993::bigint AS big, 1 AS campaigns FROM campaigns"], embedded, options);
    expect([counted.code, counted.stdout.trim()], counted.stderr).toEqual([0, '{"campaigns":0,"big":"9007199254740993","campaigns:2":1}']);
    const deleted = await runColdsync(["sql", "DELETE FROM campaigns"], embedded, options);
    expect([deleted.code, deleted.stderr.trim()]).toEqual([1, "coldsync: cannot execute DELETE in a read-only transaction"]);
    const escaped = await runColdsync(["sql", "COMMIT; DELETE FROM campaigns"], embedded, options);
    expect(escaped.stderr.trim()).toMatch(/^coldsync: one statement at a time/);
  });
});

describe("coldsync demo", () => {
  it("says how to query what it wrote, in the schema it wrote to", async () => {
    const demo = await runColdsync(["demo"], env);
    expect(demo.stdout).toContain('query it yourself: npx coldsync sql "SELECT * FROM campaign_funnel", or from any PostgreSQL client: SELECT * FROM sql_demo.campaign_funnel;');
  });

  it("--serve opens its status page before the first sync, so the page shows that sync's progress", async () => {
    const demo = spawn(process.execPath, [BIN, "demo", "--serve", "--port", "0", "--every", "1h"], { env: { PATH: process.env.PATH ?? "", ...env } });
    let stdout = "";
    demo.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    const exited = new Promise<number | null>((resolve) => demo.once("exit", resolve));
    try {
      const deadline = Date.now() + 60_000;
      while (!stdout.includes("query it yourself") && demo.exitCode === null && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      const url = /status page: (\S+)/.exec(stdout)?.[1];
      expect(url, stdout).toBeDefined();
      expect(stdout.indexOf("status page:")).toBeLessThan(stdout.search(/run \d+: /));
      expect((await fetch(url as string)).status).toBe(200);
    } finally {
      demo.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
    expect(stdout.trim().split("\n").at(-1)).toBe("stopped");
  });
});
