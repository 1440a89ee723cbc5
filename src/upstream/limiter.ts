import { setTimeout as sleep } from "node:timers/promises";

/**
 * Gate in front of every request of one account. `pauseFor` is how a 429
 * holds back every request of the account, not just the one that got it;
 * the worker backs this interface with Redis so the pause spans processes.
 */
export interface RequestLimiter {
  /** Resolves when one more request may be sent; rejects when `signal` aborts. */
  acquire(signal?: AbortSignal): Promise<void>;
  /** No request may be sent for the next `ms` milliseconds. */
  pauseFor(ms: number): void;
}

/**
 * In-process limiter that spaces requests evenly, 1000/requestsPerSecond ms
 * apart, with no burst allowance: a burst could put more than
 * requestsPerSecond requests into one of the upstream's one-second windows.
 */
export class IntervalLimiter implements RequestLimiter {
  readonly #intervalMs: number;
  #nextSlotAt = 0;
  #pausedUntil = 0;

  constructor(requestsPerSecond: number) {
    if (!(requestsPerSecond > 0)) throw new RangeError("requestsPerSecond must be positive");
    this.#intervalMs = 1000 / requestsPerSecond;
  }

  async acquire(signal?: AbortSignal): Promise<void> {
    // Re-evaluated after every wait: a pause may have been set meanwhile,
    // or another caller may have taken the slot this one waited for.
    for (;;) {
      signal?.throwIfAborted();
      const now = performance.now();
      const openAt = Math.max(this.#nextSlotAt, this.#pausedUntil);
      if (openAt <= now) {
        this.#nextSlotAt = now + this.#intervalMs;
        return;
      }
      await sleep(openAt - now, undefined, { signal });
    }
  }

  pauseFor(ms: number): void {
    this.#pausedUntil = Math.max(this.#pausedUntil, performance.now() + ms);
  }
}
