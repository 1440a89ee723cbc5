import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { rateBudgetKeys, RedisRequestLimiter } from "../../src/queue/rate-budget.ts";
import { useTestRedis } from "../support/redis.ts";

const testRedis = useTestRedis("budget");
const connections: Redis[] = [];

/** Each limiter gets its own connection, as two worker processes would. */
function limiter(account: string, requestsPerSecond: number): RedisRequestLimiter {
  const redis = new Redis(testRedis.url);
  connections.push(redis);
  return new RedisRequestLimiter(redis, { prefix: testRedis.prefix, account, requestsPerSecond });
}

afterAll(() => {
  for (const redis of connections) redis.disconnect();
});

describe("RedisRequestLimiter", () => {
  it("spaces the requests of two processes as one budget", async () => {
    const [first, second] = [limiter("shared", 50), limiter("shared", 50)];
    const grantedAt: number[] = [];
    const take = async (gate: RedisRequestLimiter) => {
      for (let i = 0; i < 20; i += 1) {
        await gate.acquire();
        grantedAt.push(performance.now());
      }
    };
    await Promise.all([take(first), take(second)]);
    grantedAt.sort((a, b) => a - b);
    // 50 per second is one slot every 20 ms, so 40 grants span at least 39 slots. A grant can only be seen
    // late, never early; the slack covers the first grant being seen late.
    expect(grantedAt.length).toBe(40);
    expect((grantedAt.at(-1) as number) - (grantedAt[0] as number)).toBeGreaterThan(39 * 20 - 60);
  });

  it("holds back every process while one of them is paused by a 429", async () => {
    const [paused, other] = [limiter("throttled", 100), limiter("throttled", 100)];
    paused.pauseFor(400);
    const observer = connections.at(-1) as Redis;
    await expect.poll(() => observer.pttl(rateBudgetKeys(testRedis.prefix, "throttled").pause)).toBeGreaterThan(0);
    const startedAt = performance.now();
    await other.acquire();
    expect(performance.now() - startedAt).toBeGreaterThan(250);
  });

  it("never shortens a longer pause", async () => {
    const gate = limiter("long-pause", 10);
    const redis = connections.at(-1) as Redis;
    const { pause } = rateBudgetKeys(testRedis.prefix, "long-pause");
    gate.pauseFor(5_000);
    await expect.poll(() => redis.pttl(pause)).toBeGreaterThan(4_000);
    gate.pauseFor(100);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await redis.pttl(pause)).toBeGreaterThan(4_000);
  });

  it("keeps separate budgets per account", async () => {
    const [busy, idle] = [limiter("account-a", 1), limiter("account-b", 1)];
    await busy.acquire();
    let busyGranted = false;
    const busyAgain = busy.acquire().then(() => {
      busyGranted = true;
    });
    await idle.acquire();
    expect(busyGranted).toBe(false);
    await busyAgain;
  });

  it("stops waiting when the caller aborts", async () => {
    const gate = limiter("aborted", 1);
    await gate.acquire();
    const controller = new AbortController();
    const waiting = gate.acquire(controller.signal);
    controller.abort(new Error("shutting down"));
    await expect(waiting).rejects.toThrow();
  });
});
