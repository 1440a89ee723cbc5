import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { RedisRequestLimiter } from "../../src/queue/rate-budget.ts";
import { useTestRedis } from "../support/redis.ts";
import { sendJson, useLocalServers } from "./support.ts";

/**
 * An absurd Retry-After (longer than the 24.8 days a Node.js timer can hold: 2^31-1 ms) must neither hammer nor
 * spin: Node clamps an overflowing delay to 1 ms, so a client that handed it to setTimeout would wake up every
 * millisecond, forever, each time printing a TimeoutOverflowWarning to stderr (outside the JSON log stream).
 */

const KEY = "sk-huge-retry-after-1";
const local = useLocalServers();
const testRedis = useTestRedis("huge-retry-after");
const connections: Redis[] = [];
afterAll(() => {
  for (const redis of connections) redis.disconnect();
});

/** TimeoutOverflowWarnings emitted while `during` runs. */
async function overflowWarnings(during: () => Promise<void>): Promise<number> {
  let count = 0;
  const listener = (warning: Error) => {
    if (warning.name === "TimeoutOverflowWarning") count += 1;
  };
  process.on("warning", listener);
  try {
    await during();
    // emitWarning delivers on the next tick
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off("warning", listener);
  }
  return count;
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("a 429 with an absurdly long Retry-After", () => {
  it("(seconds form, in-process limiter as `sync --once` uses) does not wake up every millisecond", async () => {
    const server = await local.serve((_request, response, index) => {
      if (index === 0) {
        // 30 days in whole seconds: 2,592,000,000 ms, more than a timer holds.
        response.writeHead(429, { "content-type": "application/json", "retry-after": "2592000" });
        response.end(JSON.stringify({ message: "come back next month" }));
        return;
      }
      sendJson(response, 200, []);
    });
    const client = local.connect({ baseUrl: server.url, apiKey: KEY, requestsPerSecond: 1_000, maxRetries: 2, retryBaseMs: 1, retryCapMs: 5 });
    const controller = new AbortController();
    let pending: Promise<unknown> = Promise.resolve();

    const warnings = await overflowWarnings(async () => {
      pending = client.listWorkspaces(controller.signal).catch((error: unknown) => error);
      await wait(1_500);
    });
    controller.abort(new Error("test over"));
    await pending;

    expect(server.requests).toHaveLength(1);
    expect(warnings).toBe(0);
  });

  it("(HTTP-date form, the worker's Redis budget) does not wake up every millisecond in this or another process", async () => {
    const server = await local.serve((_request, response, index) => {
      if (index === 0) {
        const inSixtyDays = new Date(Date.now() + 60 * 24 * 3_600_000).toUTCString();
        response.writeHead(429, { "content-type": "application/json", "retry-after": inSixtyDays });
        response.end(JSON.stringify({ message: "come back later" }));
        return;
      }
      sendJson(response, 200, []);
    });
    const limiterOf = () => {
      const redis = new Redis(testRedis.url);
      connections.push(redis);
      return new RedisRequestLimiter(redis, { prefix: testRedis.prefix, account: "huge", requestsPerSecond: 1_000 });
    };
    const client = local.connect({ baseUrl: server.url, apiKey: KEY, maxRetries: 2, retryBaseMs: 1, retryCapMs: 5, limiter: limiterOf() });
    const otherProcess = limiterOf();
    const controller = new AbortController();
    const pendings: Promise<unknown>[] = [];

    const warnings = await overflowWarnings(async () => {
      pendings.push(client.listWorkspaces(controller.signal).catch((error: unknown) => error));
      await wait(300);
      pendings.push(otherProcess.acquire(controller.signal).catch((error: unknown) => error));
      await wait(1_200);
    });
    controller.abort(new Error("test over"));
    await Promise.all(pendings);

    expect(server.requests).toHaveLength(1);
    expect(warnings).toBe(0);
  });
});
