import type { Redis } from "ioredis";
import { sql, type Kysely } from "kysely";
import type { Database } from "../warehouse/database.ts";
import { withDeadline } from "./deadline.ts";

/**
 * What /healthz checks: the worker is useless without Redis (its queues) or
 * the warehouse (where it writes), so either one failing makes it unhealthy.
 * Redis must take a write, not only answer PING: at maxmemory under the
 * `noeviction` policy docs/worker.md asks for, or after a failed save
 * (MISCONF), it still answers PING but refuses every job's move. Each check
 * has its own deadline, so a hung dependency answers 503 instead of hanging
 * the probe.
 */

export interface HealthDependencies {
  redis: Redis;
  /** The key the check writes (with a short expiry), under the worker's prefix. */
  redisKey: string;
  db: Kysely<Database>;
}

export interface HealthReport {
  ok: boolean;
  checks: { redis: string; warehouse: string };
}

const CHECK_TIMEOUT_MS = 2_000;
const REDIS_KEY_TTL_MS = 60_000;

export async function checkHealth(dependencies: HealthDependencies, timeoutMs = CHECK_TIMEOUT_MS): Promise<HealthReport> {
  const [redis, warehouse] = await Promise.all([
    probe(() => dependencies.redis.set(dependencies.redisKey, "1", "PX", REDIS_KEY_TTL_MS), timeoutMs),
    probe(() => sql`select 1`.execute(dependencies.db), timeoutMs),
  ]);
  return { ok: redis === "ok" && warehouse === "ok", checks: { redis, warehouse } };
}

/** "ok", or why not: the check's error, or that it did not answer in time. */
export async function probe(check: () => Promise<unknown>, timeoutMs: number): Promise<string> {
  try {
    await withDeadline(check(), timeoutMs);
    return "ok";
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
