import { setTimeout as sleep } from "node:timers/promises";
import { sql, type Kysely } from "kysely";
import { afterAll, afterEach, beforeAll } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { createLogger } from "../../src/logger.ts";
import { closeRedis, connectRedis } from "../../src/queue/connection.ts";
import type { DiscoveredCampaign } from "../../src/queue/cadence.ts";
import type { SyncFunctions } from "../../src/queue/leased-job.ts";
import type { RunResult } from "../../src/queue/verdict.ts";
import { startWorkerService, type WorkerService, type WorkerTuning } from "../../src/queue/worker.ts";
import type { Warehouse } from "../../src/warehouse/connect.ts";
import type { Database } from "../../src/warehouse/database.ts";
import { useTestDatabase } from "../support/database.ts";
import { useTestRedis } from "../support/redis.ts";
import { openMigratedWarehouse } from "./warehouse.ts";

/**
 * Worker services wired to small real sync functions: instead of calling the
 * upstream they record each run (who, which campaign, when) in PostgreSQL and
 * write a sync_runs row, so the tests can check what the queues did.
 */

export const ACCOUNT = "acme";

/** Short locks and backoffs, so stalls and retries happen within a test. */
export const FAST_TUNING: Partial<WorkerTuning> = {
  lockDurationMs: 2_000,
  stalledIntervalMs: 1_000,
  retry: { attempts: 3, backoffMs: 50 },
  leaseTtlMs: 2_000,
  busyDelayMs: 100,
};

export interface Interval {
  campaign_uid: string;
  rhythm: string;
  worker: string;
  started_ms: number;
  finished_ms: number;
}

export async function createIntervalTable(db: Kysely<Database>): Promise<void> {
  await sql`CREATE TABLE IF NOT EXISTS test_intervals (campaign_uid text, rhythm text, worker text, started_ms bigint, finished_ms bigint)`.execute(db);
}

export async function intervals(db: Kysely<Database>): Promise<Interval[]> {
  const result = await sql<Interval>`SELECT campaign_uid, rhythm, worker, started_ms::float8 AS started_ms, finished_ms::float8 AS finished_ms FROM test_intervals ORDER BY started_ms`.execute(db);
  return result.rows;
}

/** Pairs of runs of one campaign and rhythm whose time spans overlap (the two rhythms of a campaign may). */
export function overlaps(rows: Interval[]): [Interval, Interval][] {
  const found: [Interval, Interval][] = [];
  for (const [index, first] of rows.entries()) {
    for (const second of rows.slice(index + 1)) {
      const sameScope = first.campaign_uid === second.campaign_uid && first.rhythm === second.rhythm;
      if (sameScope && second.started_ms < first.finished_ms && first.started_ms < second.finished_ms) found.push([first, second]);
    }
  }
  return found;
}

async function recordRun(db: Kysely<Database>, scope: string | null, worker: string, startedMs: number, rhythm = "all"): Promise<number> {
  const finishedMs = Date.now();
  if (scope !== null) {
    await sql`INSERT INTO test_intervals VALUES (${scope}, ${rhythm}, ${worker}, ${startedMs}, ${finishedMs})`.execute(db);
  }
  const row = await db
    .insertInto("sync_runs")
    .values({ account: ACCOUNT, scope, trigger: "worker", started_at: new Date(startedMs), finished_at: new Date(finishedMs), outcome: "succeeded" })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

/** A campaign sync that takes `durationMs` (cut short by its signal) and records itself. */
export function recordingCampaignSync(db: Kysely<Database>, worker: string, durationMs = 100): SyncFunctions["syncCampaign"] {
  return async (campaignUid, rhythm, signal): Promise<RunResult> => {
    const startedMs = Date.now();
    try {
      await sleep(durationMs, undefined, { signal });
    } catch {
      return { runId: 0, outcome: "aborted", failures: [] };
    }
    return { runId: await recordRun(db, campaignUid, worker, startedMs, rhythm), outcome: "succeeded", failures: [] };
  };
}

/** A discovery that "finds" `campaigns` and records a run. */
export function fixedDiscovery(db: Kysely<Database>, campaigns: DiscoveredCampaign[]): SyncFunctions["discover"] {
  return async () => ({ runId: await recordRun(db, null, "discovery", Date.now()), outcome: "succeeded", failures: [], campaigns });
}

export interface ServiceSettings {
  redisUrl: string;
  prefix: string;
  db: Kysely<Database>;
  sync: SyncFunctions;
  env?: Record<string, string>;
  tuning?: Partial<WorkerTuning>;
}

/** A service on its own client connection, as `coldsync worker` runs it; close() closes that connection too. */
export async function startService(settings: ServiceSettings): Promise<WorkerService> {
  const config = loadConfig({
    REDIS_URL: settings.redisUrl,
    COLDSYNC_QUEUE_PREFIX: settings.prefix,
    COLDSYNC_ACCOUNT: ACCOUNT,
    COLDSYNC_DISCOVER_EVERY: "1h",
    COLDSYNC_CONCURRENCY: "2",
    ...settings.env,
  });
  const logger = createLogger({ level: "silent" });
  const redis = connectRedis(config.redis.url, "client", logger);
  try {
    const service = await startWorkerService({
      config,
      redis,
      db: settings.db,
      sync: settings.sync,
      logger,
      tuning: { ...FAST_TUNING, ...settings.tuning },
    });
    return {
      ...service,
      close: async () => {
        await service.close();
        await closeRedis(redis);
      },
    };
  } catch (error) {
    await closeRedis(redis);
    throw error;
  }
}

/** What a test file's worker services share: its database, its Redis prefix and the services its tests start. */
export interface WorkerServices {
  redisUrl: string;
  /** The file's warehouse, open from beforeAll to afterAll. */
  warehouse(): Warehouse;
  /** Gives the test its own queues under the file's prefix, and returns their prefix. */
  nextPrefix(): string;
  /** The current test's prefix. */
  prefix(): string;
  /** A service on the current test's prefix whose sync functions do nothing but record (or `sync`); closed after the test. */
  start(sync: Partial<SyncFunctions>, settings?: Partial<ServiceSettings>): Promise<WorkerService>;
  /** Closes a service before the test ends. */
  close(service: WorkerService): Promise<void>;
}

/** Registers the hooks of a file of worker-service tests: a database and a Redis prefix named after `name`. */
export function useWorkerServices(name: string): WorkerServices {
  const databaseUrl = useTestDatabase(name);
  const testRedis = useTestRedis(name);
  let warehouse: Warehouse | undefined;
  let running: WorkerService[] = [];
  let testNumber = 0;
  let prefix = "";
  const opened = (): Warehouse => {
    if (!warehouse) throw new Error("the warehouse is open only inside tests and hooks");
    return warehouse;
  };

  beforeAll(async () => {
    warehouse = await openMigratedWarehouse(databaseUrl());
    await createIntervalTable(warehouse.db);
  });

  afterEach(async () => {
    await Promise.all(running.map((service) => service.close()));
    running = [];
    await sql`TRUNCATE test_intervals, sync_runs CASCADE`.execute(opened().db);
  });

  afterAll(async () => {
    await warehouse?.destroy();
  });

  return {
    redisUrl: testRedis.url,
    warehouse: opened,
    nextPrefix: () => {
      testNumber += 1;
      prefix = `${testRedis.prefix}:${testNumber}`;
      return prefix;
    },
    prefix: () => prefix,
    start: async (sync, settings = {}) => {
      const db = opened().db;
      const service = await startService({
        redisUrl: testRedis.url,
        prefix,
        db,
        sync: { discover: fixedDiscovery(db, []), syncCampaign: recordingCampaignSync(db, "w"), verify: async () => 0, prune: async () => null, ...sync },
        ...settings,
      });
      running.push(service);
      return service;
    },
    close: async (service) => {
      await service.close();
      running = running.filter((other) => other !== service);
    },
  };
}
