import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { sql } from "kysely";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Warehouse } from "../../src/warehouse/connect.ts";
import { useTestDatabase } from "../support/database.ts";
import { useEmulator } from "../support/emulator.ts";
import { useTestRedis } from "../support/redis.ts";
import { distinctiveApiKey, waitUntilQuiet, spawnWorker as spawnWorkerProcess, workerEnv, type WorkerProcess } from "./end-to-end.ts";
import { openMigratedWarehouse } from "./warehouse.ts";

/**
 * A worker killed with SIGKILL, then the deployment restarted under a new COLDSYNC_ACCOUNT (the documented way to
 * rename an account: a worker removes other accounts' job schedulers from its prefix on start). A killed worker's run
 * rows are closed as `aborted` by the next worker start, whatever account they were opened under.
 */

const API_KEY = distinctiveApiKey();
const emulator = useEmulator({ apiKeys: [API_KEY], latencyMs: 10 });
const databaseUrl = useTestDatabase("worker_rename");
const testRedis = useTestRedis("worker-rename");
let warehouse: Warehouse;
const children: ChildProcess[] = [];

beforeAll(async () => {
  warehouse = await openMigratedWarehouse(databaseUrl());
  emulator().advance(3_600);
});

afterEach(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

afterAll(async () => {
  await warehouse.destroy();
});

function spawnWorker(account: string): WorkerProcess {
  const env = workerEnv({ apiUrl: emulator().url, apiKey: API_KEY, databaseUrl: databaseUrl(), redisUrl: testRedis.url, prefix: testRedis.prefix }, { COLDSYNC_ACCOUNT: account });
  return spawnWorkerProcess(env, children, 2);
}

describe("a killed worker, restarted under a new COLDSYNC_ACCOUNT", () => {
  it("does not leave the dead process's runs `running` in sync_runs forever", async () => {
    const doomed = spawnWorker("before-rename");
    await expect
      .poll(async () => {
        const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM sync_runs WHERE scope IS NOT NULL AND outcome = 'running'`.execute(warehouse.db);
        return rows[0]?.n ?? 0;
      }, { timeout: 20_000, interval: 50 })
      .toBeGreaterThan(0);
    const killed = once(doomed.child, "exit");
    doomed.child.kill("SIGKILL");
    await killed;

    const renamed = spawnWorker("after-rename");
    await waitUntilQuiet(testRedis.url, testRedis.prefix, 40_000);
    // Every process that wrote a run row is gone but `renamed`, which is idle now: no row can truthfully be running.
    const { rows } = await sql<{ id: number; account: string; scope: string | null; outcome: string }>`
      SELECT id::int AS id, account, scope, outcome FROM sync_runs WHERE outcome = 'running' ORDER BY id`.execute(warehouse.db);
    expect(rows, renamed.output()).toEqual([]);
    const exited = once(renamed.child, "exit");
    renamed.child.kill("SIGTERM");
    await exited;
  }, 90_000);
});
