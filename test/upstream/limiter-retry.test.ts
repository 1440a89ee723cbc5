import { describe, expect, it } from "vitest";
import { IntervalLimiter } from "../../src/upstream/limiter.ts";
import { backoffDelay } from "../../src/upstream/retry.ts";
import { rejectionOf } from "./support.ts";

describe("backoffDelay", () => {
  const policy = { maxRetries: 6, baseMs: 100, capMs: 1_000 };

  it("draws uniformly below min(cap, base * 2^retry), spread over the whole range", () => {
    for (const [retry, ceiling] of [
      [0, 100],
      [2, 400],
      [3, 800],
      [4, 1_000],
      [9, 1_000],
    ] as const) {
      const draws = Array.from({ length: 2_000 }, () => backoffDelay(retry, policy));
      expect(Math.max(...draws)).toBeLessThan(ceiling);
      expect(Math.min(...draws)).toBeGreaterThanOrEqual(0);
      expect(Math.min(...draws)).toBeLessThan(ceiling * 0.05);
      expect(Math.max(...draws)).toBeGreaterThan(ceiling * 0.95);
    }
  });

  it("never goes under a Retry-After", () => {
    const draws = Array.from({ length: 500 }, () => backoffDelay(1, policy, 2_000));
    expect(Math.min(...draws)).toBe(2_000);
  });
});

describe("IntervalLimiter", () => {
  it("spaces acquisitions 1000/rps apart", async () => {
    const limiter = new IntervalLimiter(20);
    const times: number[] = [];
    for (let index = 0; index < 6; index++) {
      await limiter.acquire();
      times.push(performance.now());
    }
    // Times are read just after each acquisition resolves, so two readings can sit a hair closer than the slots they follow.
    for (let index = 1; index < times.length; index++) expect(times[index]! - times[index - 1]!).toBeGreaterThanOrEqual(49);
    expect(times.at(-1)! - times[0]!).toBeGreaterThanOrEqual(5 * 50 - 1);
  });

  it("holds every caller back during a pause", async () => {
    const limiter = new IntervalLimiter(1_000);
    await limiter.acquire();
    const paused = performance.now();
    limiter.pauseFor(300);
    const released = await Promise.all([1, 2].map(() => limiter.acquire().then(() => performance.now())));
    for (const at of released) expect(at - paused).toBeGreaterThanOrEqual(300);
  });

  it("gives up waiting when the signal aborts", async () => {
    const limiter = new IntervalLimiter(1_000);
    limiter.pauseFor(60_000);
    const controller = new AbortController();
    const waiting = rejectionOf(limiter.acquire(controller.signal));
    controller.abort(new Error("stop"));
    expect(await waiting).toBeInstanceOf(Error);
  });
});
