import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Redis } from "ioredis";
import { sql } from "kysely";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openQueues, type Queues } from "../../src/queue/queues.ts";
import type { Warehouse } from "../../src/warehouse/connect.ts";
import { useTestDatabase } from "../support/database.ts";
import { useEmulator } from "../support/emulator.ts";
import { useTestRedis } from "../support/redis.ts";
import { distinctiveApiKey, spawnWorker as spawnWorkerProcess, workerEnv, type WorkerProcess } from "./end-to-end.ts";
import { openMigratedWarehouse } from "./warehouse.ts";

/**
 * SIGTERM while the upstream throttles with a long Retry-After given as an HTTP date: the worker must not wait it out.
 */

const API_KEY = distinctiveApiKey();
const emulator = useEmulator({ apiKeys: [API_KEY], latencyMs: 5 });
const databaseUrl = useTestDatabase("worker_sigterm_throttled");
const testRedis = useTestRedis("worker-sigterm-throttled");
let warehouse: Warehouse;
let redis: Redis;
let queues: Queues;
const children: ChildProcess[] = [];

interface Proxy {
  url: string;
  throttle: boolean;
  throttled: number;
  close(): Promise<void>;
}

async function startProxy(target: () => string, retryAfter: () => string): Promise<Proxy> {
  const state = { throttle: false, throttled: 0 };
  const server: Server = createServer((incoming, outgoing) => {
    const path = new URL(incoming.url ?? "/", "http://proxy").pathname;
    if (state.throttle && path === "/api/v1/leads/") {
      state.throttled += 1;
      outgoing.writeHead(429, { "content-type": "application/json", "retry-after": retryAfter() });
      outgoing.end(JSON.stringify({ message: "too many requests" }));
      incoming.resume();
      return;
    }
    const forwarded = request(`${target()}${incoming.url ?? "/"}`, { method: incoming.method, headers: incoming.headers }, (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    });
    incoming.pipe(forwarded);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const proxy: Proxy = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get throttle() {
      return state.throttle;
    },
    set throttle(value: boolean) {
      state.throttle = value;
    },
    get throttled() {
      return state.throttled;
    },
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  } as Proxy;
  return proxy;
}

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

function spawnWorker(apiUrl: string): WorkerProcess {
  return spawnWorkerProcess(workerEnv({ apiUrl, apiKey: API_KEY, databaseUrl: databaseUrl(), redisUrl: testRedis.url, prefix: testRedis.prefix }), children);
}

describe("SIGTERM during a long Retry-After (HTTP date)", () => {
  it("exits 0 promptly, closes its runs and requeues the jobs without spending attempts", async () => {
    const proxy = await startProxy(
      () => emulator().url,
      () => new Date(Date.now() + 120_000).toUTCString(),
    );
    try {
      const worker = spawnWorker(proxy.url);
      // Let the first campaign runs start, then throttle their lead pages.
      await expect
        .poll(async () => {
          const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM sync_runs WHERE scope IS NOT NULL`.execute(warehouse.db);
          return rows[0]?.n ?? 0;
        }, { timeout: 20_000, interval: 50 })
        .toBeGreaterThan(0);
      proxy.throttle = true;
      await expect.poll(() => proxy.throttled, { timeout: 20_000, interval: 50 }).toBeGreaterThan(0);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const startedAt = Date.now();
      const exited = once(worker.child, "exit");
      worker.child.kill("SIGTERM");
      const [code] = (await exited) as [number | null];
      const tookMs = Date.now() - startedAt;
      expect(code, worker.output()).toBe(0);
      expect(tookMs, worker.output()).toBeLessThan(10_000);
      const { rows } = await sql<{ outcome: string; n: number }>`SELECT outcome, count(*)::int AS n FROM sync_runs GROUP BY outcome`.execute(warehouse.db);
      expect(rows.filter((row) => row.outcome === "running"), JSON.stringify(rows)).toEqual([]);
      expect(await queues.campaignSync.getFailedCount()).toBe(0);
      const jobs = await queues.campaignSync.getJobs(["waiting", "delayed", "prioritized", "wait"]);
      for (const job of jobs) expect(job.attemptsMade, `${job.id} ${job.failedReason}`).toBe(0);
    } finally {
      await proxy.close();
    }
  });
});
