import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runColdsync } from "../support/cli.ts";
import { useTestDatabase } from "../support/database.ts";

/**
 * `coldsync sql` is how the README tells an analyst to read the warehouse ("any query of The warehouse"), and it
 * prints values as psql shows them. Two kinds of value came out altered:
 *
 * - every timestamptz loses its microseconds (the README: "Instants keep their microseconds from the upstream to
 *   timestamptz"), so two open events a microsecond apart (the emulator's hostile faults create them; both are
 *   rows of their own under the natural key (schedule_id, opened_on)) print as the same instant: they look like
 *   duplicates, and a `WHERE opened_on = '<printed value>'` copied from the output finds neither;
 * - on PostgreSQL an `interval` (event_freshness.lag, and the p95 of the README's own freshness query) prints as
 *   node-postgres' object (`{"days":1,"hours":2,...}`), while the embedded warehouse prints PostgreSQL's text.
 */

const databaseUrl = useTestDatabase("sql_values");
const scratch = mkdtempSync(join(tmpdir(), "coldsync-sql-values-"));
const embedded = { COLDSYNC_DATA_DIR: join(scratch, "data") };
let postgres: Record<string, string>;

beforeAll(async () => {
  postgres = { DATABASE_URL: databaseUrl() };
  const migrated = await runColdsync(["migrate"], postgres);
  expect(migrated.code, migrated.stderr).toBe(0);
  const local = await runColdsync(["migrate"], embedded, { cwd: scratch });
  expect(local.code, local.stderr).toBe(0);
}, 120_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const backends = () => [
  ["PostgreSQL", postgres, {}],
  ["PGlite", embedded, { cwd: scratch }],
] as const;

const twoOpens = "SELECT * FROM (VALUES (TIMESTAMPTZ '2026-05-04 10:00:00.123456+00'), (TIMESTAMPTZ '2026-05-04 10:00:00.123457+00')) AS v(opened_on)";

describe("coldsync sql prints values as the warehouse holds them", () => {
  it.each([0, 1])("keeps a timestamptz's microseconds, in the table and in --json (backend %#)", async (index) => {
    const [, env, options] = backends()[index]!;
    const json = await runColdsync(["sql", "--json", twoOpens], env, options);
    expect(json.code, json.stderr).toBe(0);
    const instants = json.stdout.trim().split("\n").map((line) => (JSON.parse(line) as { opened_on: string }).opened_on);
    // Two different instants must print as two different values.
    expect(new Set(instants).size).toBe(2);
    expect(instants[0]).toMatch(/\.123456/);
    const shown = await runColdsync(["sql", twoOpens], env, options);
    expect(shown.stdout).toMatch(/\.123456/);
    expect(shown.stdout).toMatch(/\.123457/);
  });

  it("prints an interval the same way on PostgreSQL as on the embedded warehouse (PostgreSQL's own text)", async () => {
    const query = "SELECT interval '1 day 02:03:04.5' AS lag";
    const [, env, options] = backends()[1]!;
    const onPglite = await runColdsync(["sql", "--json", query], env, options);
    expect(onPglite.code, onPglite.stderr).toBe(0);
    expect(onPglite.stdout.trim()).toBe('{"lag":"1 day 02:03:04.5"}');
    const onPostgres = await runColdsync(["sql", "--json", query], postgres);
    expect(onPostgres.code, onPostgres.stderr).toBe(0);
    expect(onPostgres.stdout.trim()).toBe(onPglite.stdout.trim());
    const table = await runColdsync(["sql", query], postgres);
    expect(table.stdout).toContain("1 day 02:03:04.5");
  });

  it("prints arrays, bytes, dates, big integers and floats as PostgreSQL writes them, the same on both backends", async () => {
    const query = "SELECT ARRAY[1, 2] AS ids, ARRAY[DATE '2026-01-02'] AS days, '\\x01ff'::bytea AS raw, 9007199254740993::int8 AS big, 'NaN'::float8 AS nan, 7 AS n, true AS t, '{\"a\": 1}'::jsonb AS j";
    const expected = '{"ids":"{1,2}","days":"{2026-01-02}","raw":"\\\\x01ff","big":"9007199254740993","nan":"NaN","n":7,"t":true,"j":{"a":1}}';
    for (const [name, env, options] of backends()) {
      const outcome = await runColdsync(["sql", "--json", query], env, options);
      expect(outcome.code, outcome.stderr).toBe(0);
      expect(outcome.stdout.trim(), name).toBe(expected);
    }
  });
});
