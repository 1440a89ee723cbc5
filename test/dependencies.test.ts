import { afterEach, describe, expect, it } from "vitest";
import { DependencyWatch, isOutageNoise, reachRedis } from "../src/dependencies.ts";
import { createLogger } from "../src/logger.ts";
import { reportWorkerError } from "../src/queue/worker.ts";
import { UpstreamError } from "../src/upstream/errors.ts";
import { useTestRedis } from "./support/redis.ts";
import { TcpGate } from "./support/tcp-gate.ts";

/**
 * The Redis watch (issue 11): an outage is reported once, by whichever
 * connection notices it first, and its end is logged once Redis answers its
 * own probe again, even when the connection that noticed was one of BullMQ's.
 */

const testRedis = useTestRedis("dependencies");
const gates: TcpGate[] = [];
afterEach(async () => {
  for (const gate of gates.splice(0)) await gate.close();
});

function capture() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: "info", destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
  const messages = (pattern: RegExp) => lines.filter((line) => pattern.test(String(line.msg)));
  return { lines, logger, messages };
}

async function closedGate(): Promise<TcpGate> {
  const gate = await TcpGate.reserve(testRedis.url);
  gates.push(gate);
  return gate;
}

describe("reachRedis", () => {
  it("answers when Redis does, and fails at once, without retrying, when it does not", async () => {
    const gate = await closedGate();
    await expect(reachRedis(gate.rewrite(testRedis.url), 1_000)).rejects.toThrow();
    await gate.open();
    await expect(reachRedis(gate.rewrite(testRedis.url), 1_000)).resolves.toBeUndefined();
  });
});

describe("a worker's Redis connection that fails", () => {
  it("is reported by the Redis watch once, which probes until Redis is back and then restores what it lost", async () => {
    const gate = await closedGate();
    const { logger, lines, messages } = capture();
    const watch = new DependencyWatch("Redis", logger, { probe: () => reachRedis(gate.rewrite(testRedis.url), 1_000), policy: { initialMs: 50, maxMs: 200 } });
    let restored = 0;
    watch.onRecovered(() => void (restored += 1));

    for (const queue of ["discovery", "campaign-sync"]) reportWorkerError(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }), { queue, logger, redisWatch: watch });
    expect(watch.down).toBe(true);
    await expect.poll(() => messages(/Redis still unreachable \(attempt 2\)/).length, { timeout: 10_000 }).toBe(1);

    await gate.open();
    await expect.poll(() => watch.down, { timeout: 5_000 }).toBe(false);
    expect(messages(/Redis is unreachable/)).toHaveLength(1);
    expect(messages(/Redis is back after/)).toHaveLength(1);
    expect(restored).toBe(1);
    expect(lines.filter((line) => Number(line.level) >= 50)).toEqual([]);
  });

  it("is an alarm only when it is not about the connection", () => {
    const { logger, lines } = capture();
    reportWorkerError(new Error("Missing lock for job 7. moveToFinished"), { queue: "campaign-sync", logger, redisWatch: undefined });
    reportWorkerError(new Error("ERR unknown command"), { queue: "campaign-sync", logger, redisWatch: undefined });
    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      [40, "lost hold of a job in Redis; it is done again by whoever takes it up"],
      [50, "worker error"],
    ]);
  });
});

describe("isOutageNoise", () => {
  it("hands another connection's error to the dependency that is down, but never the upstream's own network errors", () => {
    const { logger } = capture();
    const watch = new DependencyWatch("Redis", logger);
    watch.failed(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6379"), { code: "ECONNREFUSED" }));
    const unattributed = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
    const upstream = new UpstreamError("network error ECONNRESET: other side closed", { method: "GET", endpoint: "/campaigns", status: undefined, retryable: true });
    expect(isOutageNoise([watch], { err: unattributed })).toBe(true);
    expect(isOutageNoise([watch], { err: upstream })).toBe(false);
  });
});
