import type { ServerResponse } from "node:http";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { rateBudgetKeys, RedisRequestLimiter } from "../../src/queue/rate-budget.ts";
import { useTestRedis } from "../support/redis.ts";
import { sendJson, useLocalServers } from "./support.ts";

/**
 * README, "Running the worker in production": "a 429 pauses that account's work everywhere for `Retry-After`
 * (1 s when it is missing, `0`, or a date already past)": not only once the client's retries are spent (the
 * queue's verdict), but from the first 429, in this process and, through Redis, in every other.
 */

const KEY = "sk-missing-retry-after";
const local = useLocalServers();
const testRedis = useTestRedis("missing-retry-after");
const connections: Redis[] = [];
afterAll(() => {
  for (const redis of connections) redis.disconnect();
});

function throttledOnce(header: Record<string, string>) {
  const arrivals: number[] = [];
  return {
    arrivals,
    handler: (_request: unknown, response: ServerResponse, index: number) => {
      arrivals.push(performance.now());
      if (index === 0) {
        response.writeHead(429, { "content-type": "application/json", ...header });
        response.end(JSON.stringify({ message: "too many requests" }));
        return;
      }
      sendJson(response, 200, []);
    },
  };
}

describe("a 429 without a usable Retry-After", () => {
  for (const [label, header] of [
    ["missing", {}],
    ["0", { "retry-after": "0" }],
    ["a date already past", { "retry-after": "Wed, 21 Oct 2015 07:28:00 GMT" }],
  ] as const) {
    it(`(${label}) holds the account's next request back for 1 s`, async () => {
      const upstream = throttledOnce(header);
      const server = await local.serve(upstream.handler);
      const client = local.connect({ baseUrl: server.url, apiKey: KEY, requestsPerSecond: 1_000, maxRetries: 3 });

      await client.listWorkspaces();

      expect(server.requests).toHaveLength(2);
      const [throttledAt, retriedAt] = upstream.arrivals as [number, number];
      expect(retriedAt - throttledAt).toBeGreaterThanOrEqual(950);
    });
  }

  it("pauses the account in every worker process through Redis, for 1 s", async () => {
    const upstream = throttledOnce({});
    const server = await local.serve(upstream.handler);
    const redis = new Redis(testRedis.url);
    connections.push(redis);
    const limiter = new RedisRequestLimiter(redis, { prefix: testRedis.prefix, account: "noheader", requestsPerSecond: 1_000 });
    let pausedFor = -2;
    const client = local.connect({
      baseUrl: server.url,
      apiKey: KEY,
      maxRetries: 3,
      limiter,
      hooks: {
        onRetry: () => {
          void redis.pttl(rateBudgetKeys(testRedis.prefix, "noheader").pause).then((ms) => (pausedFor = ms));
        },
      },
    });

    await client.listWorkspaces();

    expect(pausedFor).toBeGreaterThan(500);
  });
});
