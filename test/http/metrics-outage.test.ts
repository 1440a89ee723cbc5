import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startWorker, type RunningWorker } from "../../src/commands/worker-process.ts";
import { loadConfig } from "../../src/config.ts";
import { createLogger } from "../../src/logger.ts";
import type { Warehouse } from "../../src/warehouse/connect.ts";
import { useTestDatabase } from "../support/database.ts";
import { useEmulator } from "../support/emulator.ts";
import { useTestRedis } from "../support/redis.ts";
import { freePort, TcpGate } from "../support/tcp-gate.ts";
import { distinctiveApiKey, workerEnv } from "../queue/end-to-end.ts";
import { FAST_TUNING } from "../queue/harness.ts";
import { openMigratedWarehouse } from "../queue/warehouse.ts";

/** /metrics while Redis is down still answers within a Prometheus scrape timeout (10 s by default). */

const API_KEY = distinctiveApiKey();
const emulator = useEmulator({ apiKeys: [API_KEY] });
const databaseUrl = useTestDatabase("metrics_outage");
const testRedis = useTestRedis("metrics-outage");
let warehouse: Warehouse;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  warehouse = await openMigratedWarehouse(databaseUrl());
});
afterAll(() => warehouse.destroy());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function timedGet(url: string, deadlineMs: number): Promise<{ status: number | "no answer"; ms: number }> {
  const started = Date.now();
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(deadlineMs) });
    await response.text();
    return { status: response.status, ms: Date.now() - started };
  } catch {
    return { status: "no answer", ms: Date.now() - started };
  }
}

describe("observability during a Redis outage", () => {
  it("/metrics answers within 10 s while Redis is down (process and warehouse gauges stay scrapeable)", async () => {
    const gate = await TcpGate.reserve(testRedis.url);
    cleanups.push(() => gate.close());
    await gate.open();
    const port = await freePort();
    const env = workerEnv(
      { apiUrl: emulator().url, apiKey: API_KEY, databaseUrl: databaseUrl(), redisUrl: gate.rewrite(testRedis.url), prefix: testRedis.prefix },
      { COLDSYNC_HTTP_PORT: String(port) },
    );
    const logger = createLogger({ level: "silent" });
    const started = startWorker(loadConfig(env, ["apiKey", "databaseUrl"]), { logger, tuning: FAST_TUNING });
    cleanups.push(async () => (await started.catch(() => undefined))?.close());
    const worker: RunningWorker = await started;
    const base = `http://127.0.0.1:${port}`;
    expect((await timedGet(`${base}/metrics`, 10_000)).status).toBe(200);

    await gate.close();
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const results = [];
    for (let i = 0; i < 3; i += 1) results.push(await timedGet(`${base}/metrics`, 10_000));
    await gate.open();
    expect(results).toEqual(results.map(() => ({ status: 200, ms: expect.any(Number) })));
    for (const result of results) expect(result.ms).toBeLessThan(10_000);
    await worker.close();
  }, 120_000);
});
