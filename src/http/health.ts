import type { Redis } from "ioredis";
import { sql, type Kysely } from "kysely";
import type { Database } from "../warehouse/database.ts";
import { withDeadline } from "./deadline.ts";

/**
 * What /healthz checks: the worker is useless without Redis (its queues) or
 * the warehouse (where it writes), so either one failing makes it unhealthy.
 * Each check has its own deadline, so a hung dependency answers 503 instead
 * of hanging the probe.
 */

export interface HealthDependencies {
  redis: Redis;
  db: Kysely<Database>;
}

export interface HealthReport {
  ok: boolean;
  checks: { redis: string; warehouse: string };
}

const CHECK_TIMEOUT_MS = 2_000;

export async function checkHealth(dependencies: HealthDependencies, timeoutMs = CHECK_TIMEOUT_MS): Promise<HealthReport> {
  const [redis, warehouse] = await Promise.all([
    probe(() => dependencies.redis.ping(), timeoutMs),
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
