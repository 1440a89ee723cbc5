import { Redis } from "ioredis";
import type { Logger } from "../logger.ts";

/**
 * Redis connections for the worker. BullMQ workers block on Redis and must
 * wait out a Redis restart instead of failing the command, hence
 * `maxRetriesPerRequest: null`; everything else (queues as producers, the rate
 * budget, health checks) should fail fast so that an outage shows up.
 */
export type RedisRole = "worker" | "client";

export function connectRedis(url: string, role: RedisRole, logger?: Logger): Redis {
  const redis = new Redis(url, {
    connectionName: `coldsync-${role}`,
    maxRetriesPerRequest: role === "worker" ? null : 3,
  });
  // ioredis reconnects by itself; without a listener it would also print every failed attempt to stderr.
  redis.on("error", (error: Error) => logger?.warn({ err: error, role }, "Redis connection error; reconnecting"));
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
