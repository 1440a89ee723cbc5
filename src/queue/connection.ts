import { Redis, type RedisOptions } from "ioredis";
import { closeHandler } from "ioredis/built/redis/event_handler.js";
import { reconnectDelay, type DependencyWatch } from "../dependencies.ts";
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

/**
 * Between two reconnect attempts ioredis holds a connection with no socket, and
 * disconnect() then only clears the retry timer: the connection never ends, its
 * queued commands stay pending and no 'end' is emitted. BullMQ's Worker.close()
 * waits for that 'end' on its blocking connection (taskforcesh/bullmq#4656), so
 * a worker shut down during or just after a Redis outage would never close.
 * Such a connection is ended here the way ioredis ends one that drops while
 * being closed (as redis/ioredis#2169 proposes). duplicate() keeps the class,
 * so the connections BullMQ derives from the worker's end the same way.
 */
export class EndingRedis extends Redis {
  override disconnect(reconnect = false): void {
    const parked = !reconnect && this.status === "reconnecting";
    super.disconnect(reconnect);
    if (parked) closeHandler(this)();
  }

  override duplicate(override?: Partial<RedisOptions>): Redis {
    return new EndingRedis({ ...this.options, ...override });
  }
}

export function connectRedis(url: string, role: RedisRole, logger?: Logger, watch?: DependencyWatch): Redis {
  const redis = new EndingRedis(url, {
    connectionName: `coldsync-${role}`,
    maxRetriesPerRequest: role === "worker" ? null : 3,
    retryStrategy: (attempt) => {
      const delayMs = reconnectDelay(attempt);
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
  // QUIT would wait in the offline queue for a reconnection.
  if (redis.status !== "ready") return redis.disconnect();
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
