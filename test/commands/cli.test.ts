import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/server.ts";
import { runColdsync } from "../support/cli.ts";
import { useTestDatabase } from "../support/database.ts";

/** The commands as a user runs them: a real process, real exit codes, real output. */

const KEY = "cli-test-key-4f1e";

/** `timeoutMs` ends a command that should have stopped at once (SIGTERM, which `emulator` answers by closing). */
const coldsync = (args: string[], env: Record<string, string>, timeoutMs?: number) => runColdsync(args, env, timeoutMs === undefined ? {} : { timeoutMs });

const databaseUrl = useTestDatabase("cli");
let emulator: RunningEmulator;
let env: Record<string, string>;

beforeAll(async () => {
  emulator = await startEmulator({ seed: 3, scale: "small", apiKeys: [KEY] });
  env = {
    COLDSYNC_API_URL: emulator.url,
    COLDSYNC_API_KEY: KEY,
    COLDSYNC_ACCOUNT: "cli",
    COLDSYNC_RATE_LIMIT: "500",
    COLDSYNC_LOG_LEVEL: "debug",
    DATABASE_URL: databaseUrl(),
  };
});
afterAll(async () => {
  await emulator.close();
});

describe("coldsync commands", () => {
  it("stops on invalid configuration before doing anything, one line per problem", async () => {
    const outcome = await coldsync(["sync", "--once"], { COLDSYNC_API_URL: "ftp://nowhere", COLDSYNC_RATE_LIMIT: "fast", COLDSYNC_ACOUNT: "a" });
    expect(outcome.code).toBe(2);
    const lines = outcome.stderr.trim().split("\n");
    expect(lines).toEqual([
      expect.stringMatching(/^coldsync: COLDSYNC_API_URL: /),
      expect.stringMatching(/^coldsync: COLDSYNC_RATE_LIMIT: /),
      expect.stringMatching(/^coldsync: COLDSYNC_API_KEY: is required/),
      "coldsync: COLDSYNC_ACOUNT: is not a coldsync setting; did you mean COLDSYNC_ACCOUNT?",
    ]);
  });

  it("stops on a DATABASE_URL or REDIS_URL that cannot be parsed, naming the variable, before connecting or serving", async () => {
    const status = await coldsync(["status"], { DATABASE_URL: "postgres://postgres@127.0.0.1:99999/postgres" }, 20_000);
    expect(status.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^coldsync: DATABASE_URL: must be a valid postgres:\/\//)]);
    expect(status.code).toBe(2);
    const worker = await coldsync(["worker"], { ...env, REDIS_URL: "redis://127.0.0.1:notaport" }, 20_000);
    expect(worker.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^coldsync: REDIS_URL: must be a valid redis:\/\//)]);
    expect(worker.stdout).toBe("");
    expect(worker.code).toBe(2);
  });

  it("stops `emulator` on an invalid COLDSYNC_LOG_LEVEL too, instead of serving at the info level", async () => {
    const outcome = await coldsync(["emulator", "--port", "0"], { COLDSYNC_LOG_LEVEL: "loud" }, 10_000);
    expect(outcome.stdout).not.toMatch(/listening/);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^coldsync: COLDSYNC_LOG_LEVEL: /)]);
  });

  it("names every invalid worker flag by the flag, one line each, before the variables' problems", async () => {
    const outcome = await coldsync(["worker", "--concurrency", "abc", "--port", "99999", "--stall-timeout", "5x"], { ...env, COLDSYNC_RATE_LIMIT: "fast" }, 20_000);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/^coldsync: --concurrency: /),
      expect.stringMatching(/^coldsync: --port: /),
      expect.stringMatching(/^coldsync: --stall-timeout: /),
      expect.stringMatching(/^coldsync: COLDSYNC_RATE_LIMIT: /),
    ]);
    // A blank variable is unset, but a blank flag was typed: `--port " "` must not become port 0.
    const blank = await coldsync(["worker", "--port", " "], env, 20_000);
    expect(blank.code).toBe(2);
    expect(blank.stderr.trim().split("\n")).toEqual(["coldsync: --port: must not be blank"]);
  });

  it("stops demo and verify on invalid flag values like the other commands: every problem, one line each, exit 2", async () => {
    // The settings are read with the flags, before the emulator starts: one error names them all, and nothing ran.
    const demo = await coldsync(["demo", "--seed", "abc", "--port", "http", "--every", "5x"], { COLDSYNC_LOG_LEVEL: "loud" }, 20_000);
    expect(demo.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/^coldsync: --seed: /),
      expect.stringMatching(/^coldsync: --port: /),
      expect.stringMatching(/^coldsync: --every: /),
      expect.stringMatching(/^coldsync: COLDSYNC_LOG_LEVEL: /),
    ]);
    expect(demo.stdout).toBe("");
    expect(demo.code).toBe(2);
    // Number(" ") is 0: a blank seed must not quietly become seed 0.
    const blankSeed = await coldsync(["demo", "--seed", " "], {}, 20_000);
    expect(blankSeed.stderr.trim().split("\n")).toEqual(["coldsync: --seed: must not be blank"]);
    expect(blankSeed.code).toBe(2);
    // A blank campaign (a script's empty $UID) must not read as no flag: sync would walk the whole account.
    for (const command of ["sync --once", "verify"]) {
      const blankCampaign = await coldsync([...command.split(" "), "--campaign", " "], env, 20_000);
      expect({ command, stderr: blankCampaign.stderr.trim().split("\n"), code: blankCampaign.code }).toEqual({ command, stderr: ["coldsync: --campaign: must not be blank"], code: 2 });
    }
    // The emulator's port is read by the rule every command's port is.
    const ports = await Promise.all(["abc", "70000", ""].map((port) => coldsync(["emulator", "--port", port], {}, 10_000)));
    expect(ports.map((outcome) => [outcome.code, outcome.stderr.trim()])).toEqual([
      [2, "coldsync: --port: must be a port number"],
      [2, "coldsync: --port: must be a port number from 0 to 65535"],
      [2, "coldsync: --port: must not be blank"],
    ]);
    // A misspelt flag is one problem, on one line, suggestion included.
    const misspelt = await coldsync(["emulator", "--sed", "3"], {}, 10_000);
    expect([misspelt.code, misspelt.stderr.trim()]).toEqual([2, "coldsync: unknown option '--sed' (Did you mean --seed?)"]);
    // So is any other parse error, of every command.
    const unparsed = await Promise.all([["sync", "--once", "--every-campaign"], ["status", "now"], ["sink"]].map((args) => coldsync(args, {}, 10_000)));
    expect(unparsed.map((outcome) => [outcome.code, outcome.stderr.trim()])).toEqual([
      [2, "coldsync: unknown option '--every-campaign'"],
      [2, "coldsync: too many arguments for 'status'. Expected 0 arguments but got 1."],
      [2, "coldsync: unknown command 'sink' (Did you mean sync?)"],
    ]);
    const verify = await coldsync(["verify", "--deep=sometimes"], { ...env, COLDSYNC_API_KEY: "" }, 20_000);
    expect(verify.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/^coldsync: --deep: /),
      expect.stringMatching(/^coldsync: COLDSYNC_API_KEY: is required/),
    ]);
    expect(verify.code).toBe(2);
  });

  it("refuses emulator and demo flag values that could not work, before generating anything: a host no listen takes, a delay no timer waits, a key no header carries, a seed past 2^53", async () => {
    const cases: [string[], string][] = [
      [["emulator", "--host", " "], "coldsync: --host: must not be blank"],
      [["emulator", "--host", "http://0.0.0.0"], "coldsync: --host: must be a host name or an IP address (no scheme, port or path), such as 0.0.0.0, :: or localhost"],
      // Past 2^31-1 ms a timer fires at once: "30 days" of latency would answer in a millisecond.
      [["emulator", "--latency", String(30 * 86_400_000)], "coldsync: --latency: must be at most 2147483647"],
      [["emulator", "--api-keys", "ключ-alpha,key-bravo"], expect.stringMatching(/^coldsync: --api-keys \(item 1\): must be visible ASCII characters only/) as unknown as string],
      [["demo", "--seed", "99999999999999999999"], "coldsync: --seed: must be at most 9007199254740991"],
    ];
    const outcomes = await Promise.all(cases.map(([args]) => coldsync(args, {}, 10_000)));
    expect(outcomes.map((outcome) => ({ code: outcome.code, stdout: outcome.stdout, stderr: outcome.stderr.trim().split("\n") }))).toEqual(
      cases.map(([, line]) => ({ code: 2, stdout: "", stderr: [line] })),
    );
  });

  it("says to run `coldsync migrate` when status or verify meet a warehouse that was never migrated, and creates nothing", async () => {
    const client = new pg.Client({ connectionString: databaseUrl() });
    await client.connect();
    try {
      await client.query("CREATE SCHEMA cli_unmigrated");
      for (const command of ["status", "verify"]) {
        const outcome = await coldsync([command], { ...env, COLDSYNC_SCHEMA: "cli_unmigrated" }, 30_000);
        expect(outcome.code).toBe(1);
        expect(outcome.stderr.trim()).toMatch(/^coldsync: the warehouse schema "cli_unmigrated" is missing \d+ migration\(s\) \(.+\); run `coldsync migrate` first$/);
        // A mistyped schema name must not leave an empty schema behind.
        const mistyped = await coldsync([command], { ...env, COLDSYNC_SCHEMA: "cli_mistyped" }, 30_000);
        expect([mistyped.code, mistyped.stderr.trim()]).toEqual([1, 'coldsync: the warehouse schema "cli_mistyped" does not exist (COLDSYNC_SCHEMA); run `coldsync migrate` first']);
      }
      expect((await client.query("SELECT count(*)::int AS schemas FROM pg_namespace WHERE nspname = 'cli_mistyped'")).rows[0]).toEqual({ schemas: 0 });
      expect((await client.query("SELECT count(*)::int AS tables FROM pg_tables WHERE schemaname = 'cli_unmigrated'")).rows[0]).toEqual({ tables: 0 });
    } finally {
      await client.end();
    }
  });

  it("migrates, syncs once, verifies, reports status, and never prints the key", async () => {
    const migrate = await coldsync(["migrate"], env);
    expect(migrate.code).toBe(0);
    expect((await coldsync(["migrate"], env)).stdout).toMatch(/up to date/);

    const sync = await coldsync(["sync", "--once"], env);
    expect(sync.code).toBe(0);
    expect(sync.stdout).toMatch(/run \d+: succeeded/);
    expect(sync.stdout).toMatch(/leads/);

    const verify = await coldsync(["verify"], env);
    expect(verify.code).toBe(0);
    expect(verify.stdout).toMatch(/all \d+ checks are ok/);

    const status = await coldsync(["status"], env);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/running/);
    expect(status.stdout).toMatch(/│ deviations │/);

    emulator.advance(2 * 24 * 3600);
    const stale = await coldsync(["verify"], env);
    expect(stale.code).toBe(1);
    expect(stale.stdout).toMatch(/│ missing │/);

    for (const outcome of [migrate, sync, verify, status, stale]) {
      expect(outcome.stdout).not.toContain(KEY);
      expect(outcome.stderr).not.toContain(KEY);
    }
  });

  it("syncs a single campaign with --campaign", async () => {
    const campaign = emulator.truth(KEY).keys.campaigns[0] as string;
    const outcome = await coldsync(["sync", "--once", "--campaign", campaign], env);
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).not.toMatch(/workspaces/);
    expect(outcome.stdout).toMatch(/campaign_detail/);
  });

  it("fails sync --once --campaign with a campaign nobody knows (a typo), naming it, instead of succeeding", async () => {
    const outcome = await coldsync(["sync", "--once", "--campaign", "cmp_no_such_campaign"], { ...env, COLDSYNC_SCHEMA: "cli_typo" });
    expect(outcome.stdout).toMatch(/run \d+: failed/);
    expect(outcome.stdout).toMatch(/failed: cmp_no_such_campaign campaign: no such campaign/);
    expect(outcome.code).toBe(1);
  });
});
