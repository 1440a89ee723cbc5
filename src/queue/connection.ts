import { Redis } from "ioredis";
import { backoffDelay, type DependencyWatch } from "../dependencies.ts";
import type { Logger } from "../logger.ts";

/**
 * Redis connections for the worker. BullMQ workers block on Redis and must
 * wait out a Redis restart instead of failing the command, hence
 * `maxRetriesPerRequest: null`; everything else (queues as producers, the rate
 * budget, health checks) should fail fast so that an outage shows up.
 *
 * A connection that drops reconnects with exponential backoff (ioredis's
 * retryStrategy, capped at 30 s), and tells the Redis watch: one warning when
 * Redis goes away, one line per backoff step, one when it is back. BullMQ
 * duplicates a worker's connection with these options, so its own
 * connections back off the same way.
 */
export type RedisRole = "worker" | "client";

export function connectRedis(url: string, role: RedisRole, logger?: Logger, watch?: DependencyWatch): Redis {
  const redis = new Redis(url, {
    connectionName: `coldsync-${role}`,
    maxRetriesPerRequest: role === "worker" ? null : 3,
    retryStrategy: (attempt) => {
      const delayMs = backoffDelay(attempt);
      watch?.retrying(attempt, delayMs);
      return delayMs;
    },
  });
  // ioredis reconnects by itself; without a listener it would also print every failed attempt to stderr.
  redis.on("error", (error: Error) => (watch ? watch.failed(error) : logger?.warn({ err: error, role }, "Redis connection error; reconnecting")));
  if (watch) redis.on("ready", () => watch.recovered());
  return redis;
}

/** Closes a connection, falling back to a hard disconnect when Redis is unreachable. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === "end") return;
  try {
    await redis.quit();
  } catch {
    redis.disconnect();
  }
}

/** Resolves once the connection is ready; meanwhile ioredis reconnects with backoff (and its watch logs each step). */
export function whenReady(redis: Redis, signal?: AbortSignal): Promise<void> {
  if (redis.status === "ready") return Promise.resolve();
  // Not events.once: it would reject on the first connection 'error', and those only mean "not yet".
  return new Promise((resolve, reject) => {
    const onReady = () => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    };
    const onAbort = () => {
      redis.off("ready", onReady);
      reject(signal?.reason as Error);
    };
    redis.once("ready", onReady);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
