import { hostname } from "node:os";
import type { Redis } from "ioredis";
import { sql, type Kysely } from "kysely";
import type { Database } from "../warehouse/database.ts";
import { withDeadline } from "./deadline.ts";

/**
 * What /healthz checks: the worker is useless without Redis (its queues) or
 * the warehouse (where it writes), so either one failing makes it unhealthy.
 * Redis must take a write, not only answer PING: at maxmemory under the
 * `noeviction` policy docs/worker.md asks for, or after a failed save
 * (MISCONF), it still answers PING but refuses every job's move; so must
 * the warehouse, which answers a read-only one as well. Each check
 * has its own deadline, so a hung dependency answers 503 instead of hanging
 * the probe.
 */

export interface HealthDependencies {
  redis: Redis;
  /** The worker's key prefix: the check writes a key of this process's under it, expiring in a minute. */
  redisPrefix: string;
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
    probe(() => redisTakesWrites(dependencies.redis, dependencies.redisPrefix), timeoutMs),
    probe(() => warehouseTakesWrites(dependencies.db), timeoutMs),
  ]);
  return { ok: redis === "ok" && warehouse === "ok", checks: { redis, warehouse } };
}

/** Resolves when Redis takes a write (the readiness check's, also the status page's Redis line); rejects with why not. */
export async function redisTakesWrites(redis: Redis, prefix: string): Promise<void> {
  await redis.set(`${prefix}:health:${hostname()}:${process.pid}`, "1", "PX", REDIS_KEY_TTL_MS);
}

/**
 * Resolves when the warehouse would take a write; rejects with why not. A read-only PostgreSQL (a standby a
 * failover left behind, default_transaction_read_only) answers queries while every page, checkpoint and run
 * the worker writes fails.
 */
export async function warehouseTakesWrites(db: Kysely<Database>): Promise<void> {
  const { rows } = await sql<{ read_only: string }>`select current_setting('transaction_read_only') as read_only`.execute(db);
  if (rows[0]?.read_only === "on") throw new Error("the warehouse takes no writes (read-only: a standby, or default_transaction_read_only)");
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
