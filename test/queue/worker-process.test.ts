import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer, type AddressInfo } from "node:net";
import { Redis } from "ioredis";
import { sql } from "kysely";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openQueues, type Queues } from "../../src/queue/queues.ts";
import type { Warehouse } from "../../src/warehouse/connect.ts";
import { createTestDatabase, useTestDatabase } from "../support/database.ts";
import { useEmulator } from "../support/emulator.ts";
import { useTestRedis } from "../support/redis.ts";
import { distinctiveApiKey, expectWarehouseToMatch, redisContents, waitUntilQuiet, spawnWorker as spawnWorkerProcess, workerEnv, type WorkerProcess } from "./end-to-end.ts";
import { openMigratedWarehouse } from "./warehouse.ts";

/**
 * `coldsync worker` as production runs it: a child process per worker. Every
 * upstream answer is held back a little, so a campaign takes long enough to
 * be interrupted in the middle.
 */

const API_KEY = distinctiveApiKey();
const emulator = useEmulator({ apiKeys: [API_KEY], latencyMs: 15 });
const databaseUrl = useTestDatabase("process");
const testRedis = useTestRedis("process");
let warehouse: Warehouse;
let redis: Redis;
let queues: Queues;
const children: ChildProcess[] = [];

beforeAll(async () => {
  warehouse = await openMigratedWarehouse(databaseUrl());
  emulator().advance(3_600);
  redis = new Redis(testRedis.url);
  queues = openQueues(redis, { prefix: testRedis.prefix });
});

afterEach(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

afterAll(async () => {
  await queues.close();
  redis.disconnect();
  await warehouse.destroy();
});

function spawnWorker(overrides: Record<string, string> = {}): WorkerProcess {
  const env = workerEnv({ apiUrl: emulator().url, apiKey: API_KEY, databaseUrl: databaseUrl(), redisUrl: testRedis.url, prefix: testRedis.prefix }, overrides);
  return spawnWorkerProcess(env, children);
}

/** The id of a campaign run that starts after `afterId` and is still going. */
async function campaignRunInFlight(afterId: number): Promise<number> {
  let found = 0;
  await expect
    .poll(
      async () => {
        const { rows } = await sql<{ id: number }>`SELECT id::int AS id FROM sync_runs WHERE scope IS NOT NULL AND outcome = 'running' AND id > ${afterId} ORDER BY id LIMIT 1`.execute(
          warehouse.db,
        );
        found = rows[0]?.id ?? 0;
        return found;
      },
      { timeout: 20_000, interval: 50 },
    )
    .toBeGreaterThan(0);
  return found;
}

async function lastRunId(): Promise<number> {
  const { rows } = await sql<{ id: number | null }>`SELECT max(id)::int AS id FROM sync_runs`.execute(warehouse.db);
  return rows[0]?.id ?? 0;
}

async function exitOf(worker: { child: ChildProcess; output: () => string }): Promise<{ code: number | null; output: string }> {
  const [code] = (await once(worker.child, "exit")) as [number | null];
  return { code, output: worker.output() };
}

describe("coldsync worker, as a process", () => {
  it("stops before starting anything when the configuration is invalid, one line per problem", async () => {
    const { code, output } = await exitOf(spawnWorker({ COLDSYNC_RATE_LIMIT: "none", REDIS_URL: "http://not-redis" }));
    expect(code).toBe(2);
    expect(output).toMatch(/COLDSYNC_RATE_LIMIT/);
    expect(output).toMatch(/REDIS_URL/);
  });

  it("refuses to start on a warehouse that was never migrated, and says what to run", async () => {
    const empty = await createTestDatabase("unmigrated");
    try {
      const { code, output } = await exitOf(spawnWorker({ DATABASE_URL: empty.url }));
      expect(code).toBe(1);
      expect(output).toMatch(/run `coldsync migrate` first/);
      expect(output).not.toContain(API_KEY);
    } finally {
      await empty.drop();
    }
  });

  it("never prints the password in REDIS_URL when Redis refuses it", async () => {
    // A Redis that refuses every password: ioredis attaches the refused AUTH to its error, the password among its arguments.
    const refusing = createServer((socket) => socket.on("data", () => socket.write("-WRONGPASS invalid username-password pair or user is disabled.\r\n")));
    refusing.listen(0, "127.0.0.1");
    await once(refusing, "listening");
    try {
      const password = `pw-${randomBytes(10).toString("hex")}`;
      const worker = spawnWorker({ REDIS_URL: `redis://:${password}@127.0.0.1:${(refusing.address() as AddressInfo).port}` });
      await expect.poll(worker.output, { timeout: 20_000 }).toMatch(/Redis is unreachable/);
      expect(worker.output()).toMatch(/WRONGPASS/);
      expect(worker.output()).not.toContain(password);
    } finally {
      // The worker still holds a connection: it is killed after the test, and the server closes with it.
      refusing.close();
    }
  });

  it("drains on SIGTERM: the run in flight stops at a page boundary, its job goes back to the queue, exit 0", async () => {
    const worker = spawnWorker();
    const runId = await campaignRunInFlight(0);
    const exited = once(worker.child, "exit");
    worker.child.kill("SIGTERM");
    const [code] = (await exited) as [number | null];
    expect(code, worker.output()).toBe(0);
    // The engine closed its run (a killed process would leave it "running") without finishing it.
    const { rows } = await sql<{ outcome: string; scope: string }>`SELECT outcome, scope FROM sync_runs WHERE id = ${runId}`.execute(warehouse.db);
    expect(["aborted", "partial"]).toContain(rows[0]?.outcome);
    const requeued = (await queues.campaignSync.getWaiting()).find((job) => job.data.campaignUid === rows[0]?.scope);
    expect(requeued?.attemptsMade).toBe(0);
    expect(await queues.campaignSync.getFailedCount()).toBe(0);
  });

  it("resumes a campaign whose worker was killed with SIGKILL in another worker, and ends equal to the upstream", async () => {
    const doomed = spawnWorker();
    await campaignRunInFlight(await lastRunId());
    const orphaned = (await queues.campaignSync.getActive()).map((job) => job.id);
    expect(orphaned.length).toBeGreaterThan(0);
    const killed = once(doomed.child, "exit");
    doomed.child.kill("SIGKILL");
    await killed;

    const survivor = spawnWorker();
    await waitUntilQuiet(testRedis.url, testRedis.prefix, 25_000);
    for (const id of orphaned) {
      const job = await queues.campaignSync.getJob(id as string);
      expect(await job?.getState(), survivor.output()).toBe("completed");
      expect(job?.stalledCounter).toBeGreaterThan(0);
    }
    expect(await queues.campaignSync.getFailedCount()).toBe(0);
    await expectWarehouseToMatch(warehouse.db, emulator(), API_KEY);
    expect((await redisContents(testRedis.url, testRedis.prefix)).filter((text) => text.includes(API_KEY))).toEqual([]);

    const exited = once(survivor.child, "exit");
    survivor.child.kill("SIGTERM");
    expect(((await exited) as [number | null])[0], survivor.output()).toBe(0);
  });
});
