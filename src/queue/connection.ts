import { Redis } from "ioredis";

/**
 * Redis connections for the worker. BullMQ workers block on Redis and must
 * wait out a Redis restart instead of failing the command, hence
 * `maxRetriesPerRequest: null`; everything else (queues as producers, the rate
 * budget, health checks) should fail fast so that an outage shows up.
 */
export type RedisRole = "worker" | "client";

export function connectRedis(url: string, role: RedisRole): Redis {
  return new Redis(url, {
    connectionName: `coldsync-${role}`,
    maxRetriesPerRequest: role === "worker" ? null : 3,
  });
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
