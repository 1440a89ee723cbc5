import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startWorker, type RunningWorker } from "../../src/commands/worker-process.ts";
import { loadConfig } from "../../src/config.ts";
import { createLogger } from "../../src/logger.ts";
import { QUEUE_NAMES } from "../../src/queue/queues.ts";
import type { Warehouse } from "../../src/warehouse/connect.ts";
import { useTestDatabase } from "../support/database.ts";
import { useEmulator } from "../support/emulator.ts";
import { useTestRedis } from "../support/redis.ts";
import { freePort, TcpGate } from "../support/tcp-gate.ts";
import { distinctiveApiKey, workerEnv } from "./end-to-end.ts";
import { FAST_TUNING } from "./harness.ts";
import { openMigratedWarehouse } from "./warehouse.ts";

/**
 * The worker against a PostgreSQL or a Redis that is down when it starts, or
 * goes away while it runs (issue 11). Each dependency sits behind a gate
 * (test/support/tcp-gate.ts): closed, its port refuses connections and the
 * ones open are cut, as a restart does.
 */

const API_KEY = distinctiveApiKey();
const emulator = useEmulator({ apiKeys: [API_KEY] });
const databaseUrl = useTestDatabase("outage");
const testRedis = useTestRedis("outage");
let warehouse: Warehouse;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  warehouse = await openMigratedWarehouse(databaseUrl());
});
afterAll(() => warehouse.destroy());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Started {
  url: string;
  lines: Record<string, unknown>[];
  started: Promise<RunningWorker>;
}

/** Starts a worker whose PostgreSQL or Redis is reached through `gate`, capturing its log lines. */
async function startBehind(gate: TcpGate, dependency: "postgres" | "redis", extra: Record<string, string> = {}): Promise<Started> {
  const port = await freePort();
  const env = workerEnv(
    {
      apiUrl: emulator().url,
      apiKey: API_KEY,
      databaseUrl: dependency === "postgres" ? gate.rewrite(databaseUrl()) : databaseUrl(),
      redisUrl: dependency === "redis" ? gate.rewrite(testRedis.url) : testRedis.url,
      prefix: testRedis.prefix,
    },
    { COLDSYNC_HTTP_PORT: String(port), ...extra },
  );
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: "info", destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
  const started = startWorker(loadConfig(env, ["apiKey", "databaseUrl"]), { logger, tuning: FAST_TUNING });
  cleanups.push(async () => (await started.catch(() => undefined))?.close());
  return { url: `http://127.0.0.1:${port}`, lines, started };
}

async function probe(url: string): Promise<{ status: number; body: Record<string, unknown> } | undefined> {
  try {
    const response = await fetch(url);
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  } catch {
    return undefined;
  }
}

const messages = (lines: Record<string, unknown>[], pattern: RegExp) => lines.filter((line) => pattern.test(String(line.msg)));

describe("a worker started while a dependency is down", () => {
  it("answers alive but not ready, says it waits for PostgreSQL, and starts by itself once PostgreSQL is up", async () => {
    const gate = await TcpGate.reserve(databaseUrl());
    cleanups.push(() => gate.close());
    const worker = await startBehind(gate, "postgres");

    await expect.poll(async () => (await probe(`${worker.url}/readyz`))?.body.waitingFor, { timeout: 10_000 }).toBe("PostgreSQL");
    expect((await probe(`${worker.url}/readyz`))?.status).toBe(503);
    expect((await probe(`${worker.url}/healthz`))?.status).toBe(503);
    expect((await probe(`${worker.url}/livez`))?.status).toBe(200);
    await expect.poll(() => messages(worker.lines, /waiting for PostgreSQL before starting \(attempt \d+\); next try in/).length, { timeout: 10_000 }).toBeGreaterThan(0);

    await gate.open();
    await worker.started;
    await expect.poll(async () => (await probe(`${worker.url}/readyz`))?.status, { timeout: 10_000 }).toBe(200);
    expect(messages(worker.lines, /PostgreSQL is up; starting/)).toHaveLength(1);
  });

  it("says it waits for Redis, once, with a line per backoff step, and starts by itself once Redis is up", async () => {
    const gate = await TcpGate.reserve(testRedis.url);
    cleanups.push(() => gate.close());
    const worker = await startBehind(gate, "redis");

    await expect.poll(async () => (await probe(`${worker.url}/readyz`))?.body.waitingFor, { timeout: 10_000 }).toBe("Redis");
    await expect.poll(() => messages(worker.lines, /Redis still unreachable \(attempt 2\)/).length, { timeout: 10_000 }).toBe(1);
    expect((await probe(`${worker.url}/livez`))?.status).toBe(200);

    await gate.open();
    await worker.started;
    await expect.poll(async () => (await probe(`${worker.url}/readyz`))?.status, { timeout: 10_000 }).toBe(200);
    expect(messages(worker.lines, /Redis is unreachable/)).toHaveLength(1);
    expect(messages(worker.lines, /Redis is back after/)).toHaveLength(1);
  });
});

describe("a dependency that goes away while the worker runs", () => {
  it("PostgreSQL: the process lives on, is not ready meanwhile, logs the outage once and its end once", async () => {
    const gate = await TcpGate.reserve(databaseUrl());
    cleanups.push(() => gate.close());
    await gate.open();
    const worker = await startBehind(gate, "postgres", { COLDSYNC_DISCOVER_EVERY: "1s" });
    await worker.started;

    await gate.close();
    await expect.poll(async () => (await probe(`${worker.url}/readyz`))?.status, { timeout: 10_000 }).toBe(503);
    await expect.poll(() => messages(worker.lines, /PostgreSQL is unreachable/).length, { timeout: 10_000 }).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await gate.open();
    await expect.poll(async () => (await probe(`${worker.url}/readyz`))?.status, { timeout: 30_000 }).toBe(200);
    await expect.poll(() => messages(worker.lines, /PostgreSQL is back after/).length, { timeout: 30_000 }).toBe(1);
    expect(messages(worker.lines, /PostgreSQL is unreachable/)).toHaveLength(1);
    // Failed jobs and broken connections said nothing of their own: the watch's lines stand for them.
    expect(worker.lines.filter((line) => line.level === 50)).toEqual([]);
  });

  it("Redis: /metrics still answers within a scrape's timeout (10 s), without the queue depths it cannot read", async () => {
    const gate = await TcpGate.reserve(testRedis.url);
    cleanups.push(() => gate.close());
    await gate.open();
    const worker = await startBehind(gate, "redis");
    await worker.started;
    const scrape = async () => {
      const response = await fetch(`${worker.url}/metrics`, { signal: AbortSignal.timeout(10_000) });
      return { status: response.status, text: await response.text() };
    };
    expect((await scrape()).text).toContain("coldsync_queue_jobs{");

    await gate.close();
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const during = await scrape();
      expect(during.status).toBe(200);
      expect(during.text).toContain("coldsync_upstream_requests_total");
      expect(during.text).not.toContain("coldsync_queue_jobs{");
    }
    await gate.open();
  });

  it("Redis, back without its keys: the job schedulers are there again", async () => {
    const gate = await TcpGate.reserve(testRedis.url);
    cleanups.push(() => gate.close());
    await gate.open();
    const worker = await startBehind(gate, "redis");
    await worker.started;

    await gate.close();
    const direct = new Redis(testRedis.url);
    cleanups.push(async () => void direct.disconnect());
    const keys = await direct.keys(`${testRedis.prefix}:*`);
    if (keys.length > 0) await direct.del(...keys);
    const discovery = new Queue(QUEUE_NAMES.discovery, { connection: direct, prefix: testRedis.prefix });
    cleanups.push(() => discovery.close());
    expect(await discovery.getJobSchedulers()).toEqual([]);

    await gate.open();
    // The line comes once every scheduler is upserted again, the discovery scheduler first.
    await expect.poll(() => messages(worker.lines, /job schedulers upserted again/).length, { timeout: 20_000 }).toBe(1);
    expect(await discovery.getJobSchedulers()).toHaveLength(1);
    expect(messages(worker.lines, /Redis is unreachable/)).toHaveLength(1);
  });
});
