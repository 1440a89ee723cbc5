import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../src/emulator/server.ts";
import { openWarehouse } from "../../src/warehouse/connect.ts";
import { migrateToLatest } from "../../src/warehouse/migrate.ts";
import { runColdsync } from "../support/cli.ts";
import { useTestDatabase } from "../support/database.ts";

/**
 * The README's "Against a real account" block sets DATABASE_URL in the operator's shell, and its Quick start
 * offers `npx coldsync demo`. Run there, the demo synced its emulator into the real warehouse's schema as the
 * real account: its walk took each of the account's campaigns, which the emulator does not know, as deleted
 * upstream (with their leads, schedules and events), and its made-up campaigns joined the account's dashboards.
 */

const databaseUrl = useTestDatabase("demo_warehouse");
const KEY = "real-account-key-0001";
let upstream: RunningEmulator;

beforeAll(async () => {
  // The real account: another seed than the demo's (seed 1).
  upstream = await startEmulator({ seed: 3, scale: "small", apiKeys: [KEY] });
});
afterAll(async () => {
  await upstream?.close();
});

const campaignsOf = async (env: Record<string, string>) => {
  const query = "SELECT count(*) FILTER (WHERE _deleted_at IS NULL)::int AS live, count(*) FILTER (WHERE _deleted_at IS NOT NULL)::int AS deleted FROM campaigns";
  const outcome = await runColdsync(["sql", "--json", query], env);
  expect(outcome.code, outcome.stderr).toBe(0);
  return JSON.parse(outcome.stdout) as { live: number; deleted: number };
};

describe("coldsync demo in a warehouse a real account was synced into", () => {
  it("refuses a PostgreSQL schema sync wrote, naming COLDSYNC_SCHEMA, and runs in a schema of its own", async () => {
    const shell = { DATABASE_URL: databaseUrl(), COLDSYNC_ACCOUNT: "acme" };
    const real = await runColdsync(["sync", "--once"], { ...shell, COLDSYNC_API_URL: upstream.url, COLDSYNC_API_KEY: KEY }, { timeoutMs: 120_000 });
    expect(real.code, real.stderr).toBe(0);
    const before = await campaignsOf(shell);
    expect(before.live).toBeGreaterThan(0);

    const refused = await runColdsync(["demo"], shell, { timeoutMs: 120_000 });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^coldsync: COLDSYNC_SCHEMA: schema coldsync of DATABASE_URL holds what sync or worker runs wrote; .*set COLDSYNC_SCHEMA to another schema/m);
    expect(await campaignsOf(shell)).toEqual(before);

    const own = await runColdsync(["demo"], { ...shell, COLDSYNC_SCHEMA: "coldsync_demo" }, { timeoutMs: 120_000 });
    expect(own.code, own.stderr).toBe(0);
    expect(await campaignsOf(shell)).toEqual(before);
    expect((await campaignsOf({ ...shell, COLDSYNC_SCHEMA: "coldsync_demo" })).live).toBeGreaterThan(0);
  }, 300_000);

  it("refuses the embedded warehouse a sync wrote", async () => {
    const home = await mkdtemp(join(tmpdir(), "coldsync-demo-"));
    try {
      // What `sync --once` leaves in the embedded warehouse, as far as the demo looks: a migrated schema and a run.
      const dataDir = join(home, ".coldsync");
      const embedded = await openWarehouse({ databaseUrl: undefined, dataDir, schema: "coldsync" });
      try {
        await migrateToLatest(embedded);
        await embedded.db.insertInto("sync_runs").values({ account: "default", trigger: "cli", started_at: new Date(), finished_at: new Date(), outcome: "succeeded" }).execute();
      } finally {
        await embedded.destroy();
      }

      const refused = await runColdsync(["demo"], {}, { timeoutMs: 120_000, cwd: home });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/^coldsync: COLDSYNC_SCHEMA: schema coldsync of the embedded warehouse holds what sync or worker runs wrote/m);
      const reopened = await openWarehouse({ databaseUrl: undefined, dataDir, schema: "coldsync", createSchema: false });
      try {
        expect(await reopened.db.selectFrom("sync_runs").select("trigger").execute()).toEqual([{ trigger: "cli" }]);
        expect(await reopened.db.selectFrom("campaigns").select("uid").execute()).toEqual([]);
      } finally {
        await reopened.destroy();
      }
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  }, 300_000);
});
