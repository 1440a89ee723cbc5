import { setTimeout as sleep } from "node:timers/promises";
import pRetry from "p-retry";
import { UpstreamError } from "./errors.ts";

export interface RetryPolicy {
  maxRetries: number;
  baseMs: number;
  capMs: number;
}

/**
 * Exponential backoff with full jitter: a uniform pick in
 * [0, min(cap, base * 2^retryIndex)), so clients that failed together do not
 * come back together. A Retry-After is a floor the pick cannot go under.
 */
export function backoffDelay(retryIndex: number, policy: RetryPolicy, retryAfterMs?: number): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** retryIndex);
  return Math.max(Math.random() * ceiling, retryAfterMs ?? 0);
}

export interface RetryEvents {
  signal?: AbortSignal | undefined;
  onRetry?: (error: UpstreamError, attempt: number, delayMs: number) => void;
}

/**
 * Runs `attempt` until it succeeds, fails with a non-retryable error, or the
 * retries are spent. Only an UpstreamError marked retryable is retried; the
 * error that escapes carries how many attempts were made.
 */
export function withRetries<T>(attempt: (attemptNumber: number) => Promise<T>, policy: RetryPolicy, events: RetryEvents = {}): Promise<T> {
  return pRetry(
    async (attemptNumber) => {
      try {
        return await attempt(attemptNumber);
      } catch (error) {
        if (error instanceof UpstreamError) error.attempts = attemptNumber;
        throw error;
      }
    },
    {
      retries: policy.maxRetries,
      // p-retry's own backoff has no full jitter; it waits 0 ms and the wait happens in shouldRetry.
      minTimeout: 0,
      signal: events.signal,
      shouldRetry: async ({ error, attemptNumber, retriesConsumed }) => {
        if (!(error instanceof UpstreamError) || !error.retryable) return false;
        const delayMs = backoffDelay(retriesConsumed, policy, error.retryAfterMs);
        events.onRetry?.(error, attemptNumber, delayMs);
        await sleep(delayMs, undefined, { signal: events.signal });
        return true;
      },
    },
  );
}
