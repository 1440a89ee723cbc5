import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorker } from "../../src/commands/worker-process.ts";
import { loadConfig } from "../../src/config.ts";
import { createLogger } from "../../src/logger.ts";
import { rateBudgetKeys, RedisRequestLimiter } from "../../src/queue/rate-budget.ts";
import type { Warehouse } from "../../src/warehouse/connect.ts";
import { useTestDatabase } from "../support/database.ts";
import { useEmulator } from "../support/emulator.ts";
import { useTestRedis } from "../support/redis.ts";
import { distinctiveApiKey, expectWarehouseToMatch, redisContents, waitUntilQuiet, workerEnv } from "./end-to-end.ts";
import { FAST_TUNING } from "./harness.ts";
import { openMigratedWarehouse } from "./warehouse.ts";

const API_KEY = distinctiveApiKey();
// The upstream allows 20 requests a second; the worker is told it may send 200.
const emulator = useEmulator({ apiKeys: [API_KEY], rateLimit: 20 });
const databaseUrl = useTestDatabase("storm");
const testRedis = useTestRedis("storm");
let warehouse: Warehouse;

beforeAll(async () => {
  warehouse = await openMigratedWarehouse(databaseUrl());
  emulator().advance(3_600);
});

afterAll(async () => {
  await warehouse.destroy();
});

describe("a 429 storm", () => {
  it("pauses the whole account through Redis, and the sync still completes", async () => {
    const env = workerEnv({ apiUrl: emulator().url, apiKey: API_KEY, databaseUrl: databaseUrl(), redisUrl: testRedis.url, prefix: testRedis.prefix }, { COLDSYNC_CONCURRENCY: "4" });
    const config = loadConfig(env, ["apiKey", "databaseUrl"]);
    const worker = await startWorker(config, { logger: createLogger({ level: "silent" }), tuning: FAST_TUNING });
    const observer = new Redis(testRedis.url);
    try {
      // A second process's limiter, sharing the budget: it must see the pause and wait it out.
      const secondProcess = new RedisRequestLimiter(observer, { prefix: testRedis.prefix, account: "e2e", requestsPerSecond: 200 });
      const pauseKey = rateBudgetKeys(testRedis.prefix, "e2e").pause;
      let pausedFor = 0;
      await expect.poll(async () => (pausedFor = await observer.pttl(pauseKey)), { timeout: 15_000, interval: 20 }).toBeGreaterThan(100);
      const waitStartedAt = performance.now();
      await secondProcess.acquire();
      // Pauses only ever grow, so the wait is at least what was left when it was seen (timer slack aside).
      expect(performance.now() - waitStartedAt).toBeGreaterThanOrEqual(pausedFor - 100);

      await waitUntilQuiet(testRedis.url, testRedis.prefix, 25_000);
      expect(await worker.service.queues.campaignSync.getFailedCount()).toBe(0);
      const metrics = await (await fetch(`${worker.url}/metrics`)).text();
      expect(metrics).toMatch(/coldsync_upstream_retries_total\{[^}]*status="429"\} [1-9]/);
      await expectWarehouseToMatch(warehouse.db, emulator(), API_KEY);
      expect((await redisContents(testRedis.url, testRedis.prefix)).filter((text) => text.includes(API_KEY))).toEqual([]);
    } finally {
      observer.disconnect();
      await worker.close();
    }
  });
});
