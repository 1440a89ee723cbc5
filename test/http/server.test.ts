import { Redis } from "ioredis";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkHealth } from "../../src/http/health.ts";
import { createMetrics, METRIC_NAMES, type WorkerMetrics } from "../../src/http/metrics.ts";
import { startHttpServer, type HttpServer } from "../../src/http/server.ts";
import { openQueues, type Queues } from "../../src/queue/queues.ts";
import type { Warehouse } from "../../src/warehouse/connect.ts";
import type { Database } from "../../src/warehouse/database.ts";
import { upsert } from "../../src/warehouse/upsert.ts";
import { useTestDatabase } from "../support/database.ts";
import { useTestRedis } from "../support/redis.ts";
import { openMigratedWarehouse } from "../queue/warehouse.ts";

const databaseUrl = useTestDatabase("http");
const testRedis = useTestRedis("http");
const TOKEN = "metrics-token-for-tests";

let warehouse: Warehouse;
let redis: Redis;
let unreachableRedis: Redis;
let queues: Queues;
let metrics: WorkerMetrics;
let guarded: HttpServer;
let open: HttpServer;
let broken: HttpServer;

beforeAll(async () => {
  warehouse = await openMigratedWarehouse(databaseUrl());
  redis = new Redis(testRedis.url);
  // Nothing listens on port 1: every command fails at once.
  unreachableRedis = new Redis("redis://127.0.0.1:1", { lazyConnect: true, enableOfflineQueue: false, retryStrategy: () => null });
  unreachableRedis.on("error", () => undefined);
  queues = openQueues(redis, { prefix: testRedis.prefix });
  metrics = createMetrics();
  metrics.watchQueues(queues.all());
  metrics.watchCheckpoints({ db: warehouse.db, account: "acme" });
  const common = { host: "127.0.0.1", port: 0, registry: metrics.registry, queues: queues.all() };
  guarded = await startHttpServer({ ...common, token: TOKEN, health: { redis, redisPrefix: testRedis.prefix, db: warehouse.db } });
  open = await startHttpServer({ ...common, token: undefined, health: { redis, redisPrefix: testRedis.prefix, db: warehouse.db } });
  broken = await startHttpServer({ ...common, token: undefined, health: { redis: unreachableRedis, redisPrefix: testRedis.prefix, db: warehouse.db } });
});

afterAll(async () => {
  await Promise.all([guarded.close(), open.close(), broken.close()]);
  await queues.close();
  redis.disconnect();
  unreachableRedis.disconnect();
  await warehouse.destroy();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe("HTTP side of the worker", () => {
  it("answers /healthz without a token, naming each dependency", async () => {
    const response = await fetch(`${guarded.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true, checks: { redis: "ok", warehouse: "ok" } });
  });

  it("answers 503 from /healthz when Redis does not answer, and says so", async () => {
    const response = await fetch(`${broken.url}/healthz`);
    expect(response.status).toBe(503);
    const report = (await response.json()) as { ok: boolean; checks: { redis: string; warehouse: string } };
    expect(report.ok).toBe(false);
    expect(report.checks.warehouse).toBe("ok");
    expect(report.checks.redis).not.toBe("ok");
  });

  it("answers 503 from /healthz when Redis answers PING but refuses writes (maxmemory under noeviction, MISCONF)", async () => {
    // A user of its own that may PING but not write stands for a Redis that refuses every write.
    const user = `${testRedis.prefix}-readonly`;
    await redis.call("ACL", "SETUSER", user, "on", "nopass", "~*", "+@all", "-@write");
    const readOnly = new Redis(testRedis.url, { username: user, password: "any" });
    const server = await startHttpServer({
      host: "127.0.0.1",
      port: 0,
      registry: metrics.registry,
      queues: queues.all(),
      token: undefined,
      health: { redis: readOnly, redisPrefix: testRedis.prefix, db: warehouse.db },
    });
    try {
      expect(await readOnly.ping()).toBe("PONG");
      const response = await fetch(`${server.url}/healthz`);
      expect(response.status).toBe(503);
      expect(((await response.json()) as { checks: { redis: string } }).checks.redis).toMatch(/NOPERM/);
    } finally {
      await server.close();
      readOnly.disconnect();
      await redis.call("ACL", "DELUSER", user);
    }
  });

  it("answers 503 from /healthz when the warehouse answers queries but takes no write (a standby a failover left behind)", async () => {
    // Sessions that are read-only by default stand for a standby: they answer `select 1`, and refuse every INSERT.
    const readOnly = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: databaseUrl(), options: "-c default_transaction_read_only=on", max: 1 }) }) });
    try {
      await expect(sql`create temporary table probe_write (id int)`.execute(readOnly)).rejects.toThrow(/read-only transaction/);
      const report = await checkHealth({ redis, redisPrefix: testRedis.prefix, db: readOnly });
      expect(report).toEqual({ ok: false, checks: { redis: "ok", warehouse: "the warehouse takes no writes (read-only: a standby, or default_transaction_read_only)" } });
    } finally {
      await readOnly.destroy();
    }
  });

  it("guards /metrics and /admin/queues with the bearer token", async () => {
    for (const path of ["/metrics", "/admin/queues", "/admin/queues/api/queues"]) {
      expect((await fetch(`${guarded.url}${path}`)).status, path).toBe(401);
      expect((await fetch(`${guarded.url}${path}`, { headers: bearer("wrong") })).status, path).toBe(401);
      expect((await fetch(`${guarded.url}${path}`, { headers: bearer(TOKEN) })).status, path).toBe(200);
    }
  });

  it("leaves every route open when no token is configured, the queue dashboard read-only", async () => {
    expect((await fetch(`${open.url}/metrics`)).status).toBe(200);
    expect((await fetch(`${open.url}/admin/queues`)).status).toBe(200);
    const pause = (server: HttpServer, headers: Record<string, string> = {}) =>
      fetch(`${server.url}/admin/queues/api/queues/discovery/pause`, { method: "PUT", headers });
    expect((await pause(open)).status).toBe(405);
    expect(await queues.discovery.isPaused()).toBe(false);
    // With a token, whoever holds it may act on the queues.
    expect((await pause(guarded, bearer(TOKEN))).status).toBe(200);
    expect(await queues.discovery.isPaused()).toBe(true);
    await queues.discovery.resume();
  });

  it("shows every queue in Bull Board", async () => {
    const response = await fetch(`${guarded.url}/admin/queues/api/queues`, { headers: bearer(TOKEN) });
    const names = ((await response.json()) as { queues: { name: string }[] }).queues.map((queue) => queue.name);
    expect(names.sort()).toEqual(["campaign-events", "campaign-sync", "discovery", "retention", "verification"]);
  });

  it("exports upstream, warehouse and job metrics, with queue depths and checkpoint lag read at scrape time", async () => {
    metrics.clientHooks.onResponse?.({ endpoint: "/api/v1/leads/", method: "GET", status: 200, durationMs: 120, attempt: 1 });
    metrics.clientHooks.onRetry?.({ endpoint: "/api/v1/leads/", method: "GET", status: 429, error: "too many", attempt: 1, delayMs: 1000 });
    metrics.syncObserver.onRowsWritten?.("leads", 42);
    metrics.syncObserver.onRejected?.("leads");
    metrics.syncObserver.onFieldIssues?.("leads", "schedules.status", 3);
    metrics.observeJob("campaign-sync", "completed", 1_500);
    await queues.campaignSync.add("sync-campaign", { account: "acme", campaignUid: "c-1" });
    const scannedAt = new Date(Date.now() - 90_000);
    await upsert(warehouse.db, "campaigns", [{ uid: "c-1", _account: "acme", name: "c", workspace_id: 1, created_on: scannedAt, status: "running", _observed_at: scannedAt }], scannedAt);
    await warehouse.db
      .insertInto("sync_checkpoints")
      .values({ account: "acme", campaign_uid: "c-1", stream: "leads", last_complete_scan_at: scannedAt, updated_at: scannedAt })
      .execute();

    await warehouse.db
      .insertInto("verifications")
      .values({
        account: "acme",
        trigger: "worker",
        started_at: scannedAt,
        finished_at: scannedAt,
        checks: 9,
        problems: 2,
        requests: 40,
        lines: JSON.stringify([
          { campaignUid: "c-1", stream: "leads", status: "missing" },
          { campaignUid: "c-2", stream: "leads", status: "missing" },
        ]),
      })
      .execute();

    const text = await (await fetch(`${guarded.url}/metrics`, { headers: bearer(TOKEN) })).text();
    for (const name of Object.values(METRIC_NAMES)) expect(text).toContain(`# TYPE ${name}`);
    expect(text).toContain(`${METRIC_NAMES.upstreamRequests}{endpoint="/api/v1/leads/",method="GET",status="200"} 1`);
    expect(text).toContain(`${METRIC_NAMES.upstreamRetries}{endpoint="/api/v1/leads/",method="GET",status="429"} 1`);
    expect(text).toContain(`${METRIC_NAMES.rowsUpserted}{table="leads"} 42`);
    expect(text).toContain(`${METRIC_NAMES.rejectedRecords}{stream="leads"} 1`);
    expect(text).toContain(`${METRIC_NAMES.verifyProblems}{stream="leads",check="missing"} 2`);
    expect(text).toContain(`${METRIC_NAMES.verifyFinished} ${scannedAt.getTime() / 1000}`);
    expect(text).toContain(`${METRIC_NAMES.fieldIssues}{stream="leads",field="schedules.status"} 3`);
    expect(text).toContain(`${METRIC_NAMES.jobDuration}_count{queue="campaign-sync",status="completed"} 1`);
    expect(text).toContain(`${METRIC_NAMES.queueJobs}{queue="campaign-sync",state="waiting"} 1`);
    const lag = new RegExp(`${METRIC_NAMES.checkpointLag}\\{campaign_uid="c-1"\\} ([\\d.]+)`).exec(text);
    expect(Number(lag?.[1])).toBeGreaterThanOrEqual(90);
    // Two scrapes that overlap (a Prometheus pair) each read the last verification as it is: both reset, then
    // both added to one gauge, before its values were set after the read.
    for (const scraped of await Promise.all([metrics.registry.metrics(), metrics.registry.metrics()])) {
      expect(scraped).toContain(`${METRIC_NAMES.verifyProblems}{stream="leads",check="missing"} 2`);
    }
  });
});
