import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runColdsync } from "../support/cli.ts";
import { useTestDatabase } from "../support/database.ts";

/** `coldsync prune` as a user runs it: what it says, what it deletes, and how it refuses a bad flag. */

const databaseUrl = useTestDatabase("prune_cli");
const SCHEMA = "pruned";
let env: Record<string, string>;
let client: pg.Client;

const DAY_MS = 86_400_000;

async function runsFinishedDaysAgo(...days: number[]): Promise<void> {
  for (const ago of days) {
    const finished = new Date(Date.now() - ago * DAY_MS);
    await client.query(
      `INSERT INTO ${SCHEMA}.sync_runs (account, trigger, started_at, finished_at, outcome) VALUES ('acme', 'cli', $1, $1, 'succeeded')`,
      [finished],
    );
  }
}

async function runsLeft(): Promise<number> {
  const { rows } = await client.query<{ count: string }>(`SELECT count(*) FROM ${SCHEMA}.sync_runs`);
  return Number(rows[0]?.count);
}

beforeAll(async () => {
  env = { DATABASE_URL: databaseUrl(), COLDSYNC_SCHEMA: SCHEMA, COLDSYNC_ACCOUNT: "acme" };
  expect((await runColdsync(["migrate"], env)).code).toBe(0);
  client = new pg.Client({ connectionString: databaseUrl() });
  await client.connect();
  await runsFinishedDaysAgo(100, 40, 20, 1);
});
afterAll(async () => {
  await client.end();
});

describe("coldsync prune", () => {
  it("counts on --dry-run, then deletes what finished before COLDSYNC_RUN_RETENTION (30d), then before --older-than", async () => {
    const dry = await runColdsync(["prune", "--dry-run"], env);
    expect(dry).toMatchObject({ code: 0, stderr: "" });
    expect(dry.stdout).toMatch(/^would delete 2 sync run\(s\) and 0 verification\(s\) of account acme that finished before \S+Z \(dry run: nothing deleted\)\n$/);
    expect(await runsLeft()).toBe(4);
    const byDefault = await runColdsync(["prune"], env);
    expect(byDefault.stdout).toMatch(/^deleted 2 sync run\(s\) and 0 verification\(s\) of account acme /);
    expect(await runsLeft()).toBe(2);
    const byFlag = await runColdsync(["prune", "--older-than", "10d"], { ...env, COLDSYNC_RUN_RETENTION: "not read: the flag replaces it" });
    expect(byFlag).toMatchObject({ code: 0, stderr: "" });
    expect(byFlag.stdout).toMatch(/^deleted 1 sync run\(s\) /);
    expect(await runsLeft()).toBe(1);
  });

  it("refuses an --older-than a retention cannot be, by the flag's name, and prunes nothing while the retention is off", async () => {
    const bad = await runColdsync(["prune", "--older-than", "30"], env);
    expect(bad).toMatchObject({ code: 2, stdout: "" });
    expect(bad.stderr.trim().split("\n")).toEqual(["coldsync: --older-than: must be at least 1d (a bare number is milliseconds), or off"]);
    // A run old enough for any retention: only "off" keeps it.
    await runsFinishedDaysAgo(400);
    const left = await runsLeft();
    const off = await runColdsync(["prune"], { ...env, COLDSYNC_RUN_RETENTION: "off" });
    expect(off).toMatchObject({ code: 0, stderr: "" });
    expect(off.stdout).toMatch(/^the run retention is off/);
    expect(await runsLeft()).toBe(left);
  });
});
