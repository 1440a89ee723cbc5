import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { sql, type Kysely } from "kysely";
import { expect } from "vitest";
import type { RunningEmulator } from "../../src/emulator/server.ts";
import { openQueues } from "../../src/queue/queues.ts";
import type { Database } from "../../src/warehouse/database.ts";

/**
 * Helpers for the tests that run the real engine against the emulator: the
 * environment a worker needs, waiting for the queues to go quiet, and the
 * comparison of the warehouse with the emulator's ground truth.
 */

/** A key that cannot occur by chance, so finding it anywhere means it leaked. */
export function distinctiveApiKey(): string {
  return `sk-e2e-${randomBytes(12).toString("hex")}`;
}

export interface WorkerEnvironment {
  apiUrl: string;
  apiKey: string;
  databaseUrl: string;
  redisUrl: string;
  prefix: string;
}

export function workerEnv(settings: WorkerEnvironment, extra: Record<string, string> = {}): Record<string, string> {
  return {
    COLDSYNC_API_URL: settings.apiUrl,
    COLDSYNC_API_KEY: settings.apiKey,
    COLDSYNC_ACCOUNT: "e2e",
    DATABASE_URL: settings.databaseUrl,
    REDIS_URL: settings.redisUrl,
    COLDSYNC_QUEUE_PREFIX: settings.prefix,
    COLDSYNC_DISCOVER_EVERY: "1h",
    COLDSYNC_RATE_LIMIT: "200",
    COLDSYNC_HTTP_HOST: "127.0.0.1",
    COLDSYNC_HTTP_PORT: "0",
    COLDSYNC_LOG_LEVEL: "warn",
    ...extra,
  };
}

export interface WorkerProcess {
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output: () => string;
}

/**
 * `coldsync worker` (the bin, as `npx coldsync` runs it) in a child process with only `env` and PATH, added to
 * `children`, which the test file kills after each test.
 */
export function spawnWorker(env: Record<string, string>, children: ChildProcess[], concurrency = 3): WorkerProcess {
  const child = spawn(process.execPath, ["bin/coldsync.js", "worker", "--stall-timeout", "1s", "--concurrency", String(concurrency)], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let text = "";
  child.stdout?.on("data", (chunk: Buffer) => (text += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (text += chunk.toString()));
  return { child, output: () => text };
}

/** Resolves once discovery has run and no campaign job of either rhythm is left to do (the events tick's next run aside). */
export async function waitUntilQuiet(redisUrl: string, prefix: string, timeoutMs: number): Promise<void> {
  const redis = new Redis(redisUrl);
  const queues = openQueues(redis, { prefix });
  const pending = ["active", "waiting", "delayed", "prioritized"] as const;
  try {
    await expect
      .poll(
        async () => {
          const [discovery, campaigns, events] = await Promise.all([
            queues.discovery.getJobCounts("completed", "active", "waiting"),
            queues.campaignSync.getJobCounts("completed", "failed", ...pending),
            queues.campaignEvents.getJobs([...pending]),
          ]);
          const outstanding = pending.reduce((sum, state) => sum + (campaigns[state] ?? 0), 0);
          const eventsOutstanding = events.filter((job) => job.name === "sync-events").length;
          return (discovery.completed ?? 0) > 0 && (campaigns.completed ?? 0) > 0 && outstanding + eventsOutstanding === 0 && (discovery.active ?? 0) === 0;
        },
        { timeout: timeoutMs, interval: 250 },
      )
      .toBe(true);
  } finally {
    await queues.close();
    redis.disconnect();
  }
}

const ISO_UTC = sql.raw(`'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`);

/** Each table's live rows, keyed as the ground truth keys them (see GroundTruth). */
const KEY_QUERIES = {
  leads: sql<{ key: string }>`SELECT uid AS key FROM leads WHERE _deleted_at IS NULL`,
  schedules: sql<{ key: string }>`SELECT id::text AS key FROM schedules WHERE _deleted_at IS NULL`,
  replies: sql<{ key: string }>`SELECT id::text AS key FROM replies WHERE _deleted_at IS NULL`,
  link_clicks: sql<{ key: string }>`SELECT schedule_id || '|' || link || '|' || to_char(clicked_on AT TIME ZONE 'UTC', ${ISO_UTC}) AS key FROM link_clicks WHERE _deleted_at IS NULL`,
  email_opens: sql<{ key: string }>`SELECT schedule_id || '|' || to_char(opened_on AT TIME ZONE 'UTC', ${ISO_UTC}) AS key FROM email_opens WHERE _deleted_at IS NULL`,
} as const;

/** The truth's composite keys end in a date-time; written the way PostgreSQL writes it back. */
function normalizeTimeSuffix(key: string): string {
  const cut = key.lastIndexOf("|");
  return `${key.slice(0, cut)}|${new Date(key.slice(cut + 1)).toISOString()}`;
}

export async function expectWarehouseToMatch(db: Kysely<Database>, emulator: RunningEmulator, apiKey: string): Promise<void> {
  const truth = emulator.truth(apiKey);
  for (const table of ["leads", "schedules", "replies", "link_clicks", "email_opens"] as const) {
    const stored = (await KEY_QUERIES[table].execute(db)).rows.map((row) => row.key).sort();
    const expected = table === "link_clicks" || table === "email_opens" ? truth.keys[table].map(normalizeTimeSuffix).sort() : [...truth.keys[table]].sort();
    expect(stored.length, `${table} count`).toBe(truth.counts[table]);
    expect(stored, table).toEqual(expected);
  }
}

/** Every key and value under `prefix`, so a test can look for a secret in them. */
export async function redisContents(redisUrl: string, prefix: string): Promise<string[]> {
  const redis = new Redis(redisUrl);
  const found: string[] = [];
  try {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
      cursor = next;
      for (const key of keys) {
        found.push(key);
        const type = await redis.type(key);
        if (type === "string") found.push((await redis.get(key)) ?? "");
        else if (type === "hash") found.push(...Object.entries(await redis.hgetall(key)).flat());
        else if (type === "list") found.push(...(await redis.lrange(key, 0, -1)));
        else if (type === "set") found.push(...(await redis.smembers(key)));
        else if (type === "zset") found.push(...(await redis.zrange(key, 0, -1)));
        else if (type === "stream") found.push(JSON.stringify(await redis.xrange(key, "-", "+")));
      }
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
  return found;
}
