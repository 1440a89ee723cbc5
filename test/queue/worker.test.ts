import { setTimeout as sleep } from "node:timers/promises";
import { Worker, type Queue } from "bullmq";
import { Redis } from "ioredis";
import { sql } from "kysely";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { SyncFunctions } from "../../src/queue/leased-job.ts";
import { enqueueCampaignSyncs, openQueues, QUEUE_NAMES } from "../../src/queue/queues.ts";
import { RunLeases } from "../../src/queue/run-lease.ts";
import { upsertDiscoveryScheduler } from "../../src/queue/schedulers.ts";
import type { RunResult } from "../../src/queue/verdict.ts";
import type { WorkerService } from "../../src/queue/worker.ts";
import { UpstreamError } from "../../src/upstream/errors.ts";
import type { Warehouse } from "../../src/warehouse/connect.ts";
import { useTestDatabase } from "../support/database.ts";
import { useTestRedis } from "../support/redis.ts";
import { ACCOUNT, createIntervalTable, fixedDiscovery, intervals, overlaps, recordingCampaignSync, startService, type ServiceSettings } from "./harness.ts";
import { openMigratedWarehouse } from "./warehouse.ts";

const databaseUrl = useTestDatabase("worker");
const testRedis = useTestRedis("worker");
let warehouse: Warehouse;
let running: WorkerService[] = [];
let testNumber = 0;
let prefix = "";

beforeAll(async () => {
  warehouse = await openMigratedWarehouse(databaseUrl());
  await createIntervalTable(warehouse.db);
});

afterEach(async () => {
  await Promise.all(running.map((service) => service.close()));
  running = [];
  await sql`TRUNCATE test_intervals, sync_runs CASCADE`.execute(warehouse.db);
});

afterAll(async () => {
  await warehouse.destroy();
});

/** Every test gets its own queues under the file's prefix. */
function nextPrefix(): string {
  testNumber += 1;
  prefix = `${testRedis.prefix}:${testNumber}`;
  return prefix;
}

async function start(sync: Partial<SyncFunctions>, settings: Partial<ServiceSettings> = {}): Promise<WorkerService> {
  const service = await startService({
    redisUrl: testRedis.url,
    prefix,
    db: warehouse.db,
    sync: { discover: fixedDiscovery(warehouse.db, []), syncCampaign: recordingCampaignSync(warehouse.db, "w"), verify: async () => 0, ...sync },
    ...settings,
  });
  running.push(service);
  return service;
}

const upstreamError = (status: number, retryable: boolean, retryAfterMs?: number) =>
  new UpstreamError(`answered ${status}`, { endpoint: "/api/v1/leads/", method: "GET", status, retryable, retryAfterMs });

describe("worker service", () => {
  it("keeps one discovery scheduler however many workers start", async () => {
    nextPrefix();
    const first = await start({});
    await start({});
    await start({}, { env: { COLDSYNC_DISCOVER_EVERY: "10m" } });
    const schedulers = await first.queues.discovery.getJobSchedulers();
    expect(schedulers).toHaveLength(1);
    expect(schedulers[0]).toMatchObject({ every: 600_000, template: { data: { account: ACCOUNT } } });
  });

  it("removes the schedulers a worker of a former COLDSYNC_ACCOUNT left on the prefix, and the jobs they had lined up", async () => {
    nextPrefix();
    const before = await start({}, { env: { COLDSYNC_ACCOUNT: "old-name", COLDSYNC_VERIFY_EVERY: "1h" } });
    await before.close();
    running = [];
    const after = await start({});
    const { discovery, campaignEvents, verification } = after.queues;
    expect((await discovery.getJobSchedulers()).map((scheduler) => scheduler.key)).toEqual([`discovery/${ACCOUNT}`]);
    expect((await campaignEvents.getJobSchedulers()).map((scheduler) => scheduler.key)).toEqual([`events/${ACCOUNT}`]);
    expect(await verification.getJobSchedulers()).toEqual([]);
    const linedUp = [discovery, campaignEvents, verification].map((queue) => (queue as Queue).getJobs(["delayed", "waiting"]));
    const accounts = (await Promise.all(linedUp)).flat().map((job) => (job.data as { account: string }).account);
    expect(accounts).not.toContain("old-name");
  });

  it("schedules the periodic verification only when COLDSYNC_VERIFY_EVERY is set, and runs it", async () => {
    nextPrefix();
    let verified = 0;
    const on = await start(
      {
        verify: async () => {
          verified += 1;
          return 2;
        },
      },
      { env: { COLDSYNC_VERIFY_EVERY: "1h" } },
    );
    const schedulers = await on.queues.verification.getJobSchedulers();
    expect(schedulers).toHaveLength(1);
    expect(schedulers[0]).toMatchObject({ every: 3_600_000, template: { data: { account: ACCOUNT } } });
    // A scheduler's first job runs at once.
    await expect.poll(() => verified, { timeout: 10_000 }).toBeGreaterThan(0);
    // A worker started without it turns it off for everyone.
    await start({});
    expect(await on.queues.verification.getJobSchedulers()).toEqual([]);
  });

  it("fans discovery out to one campaign-sync job per due campaign", async () => {
    nextPrefix();
    // Due is judged from what was synced: the campaign's detail was read and its leads walked a moment ago.
    await warehouse.db
      .insertInto("sync_checkpoints")
      .values(
        ["campaign_detail", "leads"].map((stream) => ({ account: ACCOUNT, campaign_uid: "synced-just-now", stream, last_complete_scan_at: new Date(), updated_at: new Date() })),
      )
      .execute();
    const service = await start({
      discover: fixedDiscovery(warehouse.db, [
        { uid: "live", status: "running" },
        { uid: "waiting", status: "created" },
        { uid: "done", status: "complete" },
        { uid: "synced-just-now", status: "running" },
      ]),
    });
    await expect.poll(async () => (await intervals(warehouse.db)).map((row) => row.campaign_uid).sort(), { timeout: 10_000 }).toEqual(["done", "live", "waiting"]);
    await expect.poll(() => service.queues.discovery.getCompletedCount(), { timeout: 5_000 }).toBe(1);
    const [discovery] = await service.queues.discovery.getJobs(["completed"]);
    expect(discovery?.returnvalue.enqueued.sort()).toEqual(["done", "live", "waiting"]);
  });

  it("completes a discovery tick without discovering while another worker discovers: that one's fan-out covers it", async () => {
    nextPrefix();
    let discoveries = 0;
    const service = await start({
      discover: async () => {
        discoveries += 1;
        return { runId: 0, outcome: "succeeded", failures: [], campaigns: [] };
      },
    });
    // The scheduler's first tick, at start, discovers; then another worker starts discovering.
    await expect.poll(() => service.queues.discovery.getCompletedCount(), { timeout: 5_000 }).toBe(1);
    const other = new Redis(testRedis.url);
    const lease = await new RunLeases(other, { prefix, ttlMs: 60_000 }).acquire(ACCOUNT, { kind: "discovery" });
    try {
      expect(lease).not.toBeNull();
      const job = await service.queues.discovery.add("discover", { account: ACCOUNT });
      await expect.poll(async () => (await job.getState()) as string, { timeout: 5_000 }).toBe("completed");
      expect((await service.queues.discovery.getJob(job.id!))?.returnvalue).toEqual({ runId: null, enqueued: [] });
      expect(discoveries).toBe(1);
    } finally {
      await lease?.release();
      other.disconnect();
    }
  });

  it("runs a discovery job taken up after a stall once its dead worker's lease expires, instead of completing it undone", async () => {
    nextPrefix();
    const observer = new Redis(testRedis.url, { maxRetriesPerRequest: null });
    const queues = openQueues(observer, { prefix });
    const dead = new Worker(QUEUE_NAMES.discovery, null, { connection: observer.duplicate(), prefix, lockDuration: 1_000 });
    let stalledId: string | undefined;
    try {
      // A worker takes the scheduler's discovery, takes the discovery lease, and is SIGKILLed: its job lock and its
      // lease are no longer renewed. Renewed out of phase (lock every lockDuration/2, lease every ttl/3), the lease
      // can outlive the lock by seconds; here it does by a few.
      await upsertDiscoveryScheduler(queues.discovery, ACCOUNT, 3_600_000);
      stalledId = (await dead.getNextJob("token-of-a-dead-worker"))?.id;
      expect(stalledId).toBeDefined();
      await observer.set(`${prefix}:lease:{${ACCOUNT}}:discovery`, "lease-of-a-dead-worker", "PX", 5_000);
      await (await dead.client).disconnect();
    } finally {
      await dead.close(true).catch(() => undefined);
    }
    let discoveries = 0;
    const discover = fixedDiscovery(warehouse.db, [{ uid: "c-1", status: "running" }]);
    await start(
      {
        discover: async (signal) => {
          discoveries += 1;
          return discover(signal);
        },
      },
      { tuning: { stalledIntervalMs: 500 } },
    );
    try {
      // The survivor's stalled check hands it the dead worker's job once the job lock is gone; COLDSYNC_DISCOVER_EVERY
      // is 1h, so only that job, stepping aside until the lease expires, can discover and fan out.
      await expect.poll(async () => (await queues.discovery.getJob(stalledId as string))?.stalledCounter ?? 0, { timeout: 10_000 }).toBeGreaterThan(0);
      await expect.poll(async () => (await queues.discovery.getJob(stalledId as string))?.returnvalue ?? null, { timeout: 20_000 }).toMatchObject({ enqueued: ["c-1"] });
      expect(discoveries).toBe(1);
    } finally {
      await queues.close();
      observer.disconnect();
    }
  });

  it("holds one job per campaign, however often it is enqueued", async () => {
    nextPrefix();
    const service = await start({});
    await service.queues.campaignSync.pause();
    for (let i = 0; i < 5; i += 1) await enqueueCampaignSyncs(service.queues.campaignSync, "sync-campaign", [{ account: ACCOUNT, campaignUid: "c-1" }]);
    await enqueueCampaignSyncs(service.queues.campaignSync, "sync-campaign", [{ account: ACCOUNT, campaignUid: "c-2" }]);
    expect(await service.queues.campaignSync.getWaitingCount()).toBe(2);
    // One bulk add deduplicates too: against the jobs already waiting and within itself.
    await enqueueCampaignSyncs(
      service.queues.campaignSync,
      "sync-campaign",
      ["c-1", "c-3", "c-3", "c-2"].map((campaignUid) => ({ account: ACCOUNT, campaignUid })),
    );
    const waiting = await service.queues.campaignSync.getWaiting();
    expect(waiting.map((job) => job.data.campaignUid).sort()).toEqual(["c-1", "c-2", "c-3"]);
  });

  it("never runs one campaign in two workers at once, even for jobs that slipped past deduplication", async () => {
    nextPrefix();
    const first = await start({ syncCampaign: recordingCampaignSync(warehouse.db, "first", 150) });
    await start({ syncCampaign: recordingCampaignSync(warehouse.db, "second", 150) });
    const campaigns = ["c-1", "c-2", "c-3"];
    // Plain adds, without the deduplication id: only the run lease keeps these apart.
    const jobs = campaigns.flatMap((campaignUid) => [1, 2, 3].map(() => ({ name: "sync-campaign", data: { account: ACCOUNT, campaignUid } })));
    await first.queues.campaignSync.addBulk(jobs);
    await expect.poll(async () => (await intervals(warehouse.db)).length, { timeout: 15_000 }).toBe(jobs.length);
    const rows = await intervals(warehouse.db);
    expect(overlaps(rows)).toEqual([]);
    expect(new Set(rows.map((row) => row.worker))).toEqual(new Set(["first", "second"]));
  });

  it("retries a retryable failure and fails a 404 at once with its reason", async () => {
    nextPrefix();
    let flakyCalls = 0;
    const sync = recordingCampaignSync(warehouse.db, "w", 10);
    const service = await start({
      syncCampaign: async (campaignUid, rhythm, signal): Promise<RunResult> => {
        if (campaignUid === "gone") return { runId: 0, outcome: "failed", failures: [{ campaignUid, stream: "campaign_detail", error: upstreamError(404, false) }] };
        flakyCalls += 1;
        if (flakyCalls === 1) throw upstreamError(503, true);
        return sync(campaignUid, rhythm, signal);
      },
    });
    const queue = service.queues.campaignSync;
    await enqueueCampaignSyncs(queue, "sync-campaign", [{ account: ACCOUNT, campaignUid: "flaky" }]);
    await enqueueCampaignSyncs(queue, "sync-campaign", [{ account: ACCOUNT, campaignUid: "gone" }]);
    await expect.poll(() => queue.getCompletedCount(), { timeout: 10_000 }).toBe(1);
    await expect.poll(() => queue.getFailedCount(), { timeout: 10_000 }).toBe(1);
    const [completed] = await queue.getJobs(["completed"]);
    const [failed] = await queue.getJobs(["failed"]);
    expect(completed).toMatchObject({ data: { campaignUid: "flaky" }, attemptsMade: 2 });
    expect(failed).toMatchObject({ data: { campaignUid: "gone" }, attemptsMade: 1 });
    expect(failed?.failedReason).toMatch(/404.*campaign_detail of campaign gone/);
  });

  it("waits between half the backoff and the whole of it before a retry, as docs/worker.md says", async () => {
    nextPrefix();
    const backoffMs = 60_000;
    const failedAt = new Map<string, number>();
    const service = await start(
      {
        syncCampaign: async (campaignUid): Promise<RunResult> => {
          failedAt.set(campaignUid, Date.now());
          throw new Error("connection to the warehouse was dropped");
        },
      },
      { tuning: { retry: { attempts: 5, backoffMs } }, env: { COLDSYNC_CONCURRENCY: "12" } },
    );
    const queue = service.queues.campaignSync;
    await enqueueCampaignSyncs(queue, "sync-campaign", Array.from({ length: 12 }, (_, index) => ({ account: ACCOUNT, campaignUid: `c${index}` })));
    await expect.poll(() => queue.getDelayedCount(), { timeout: 15_000 }).toBe(12);
    const redis = await queue.client;
    const delays: number[] = [];
    for (const job of await queue.getDelayed()) {
      // A delayed job's score is the time it is due, in milliseconds, times 0x1000 (the low bits order equal times).
      const dueAt = Math.floor(Number(await redis.zscore(queue.keys.delayed as string, job.id as string)) / 0x1000);
      delays.push(dueAt - (failedAt.get(job.data.campaignUid) ?? Number.NaN));
    }
    expect(delays).toHaveLength(12);
    for (const delay of delays) {
      expect(delay).toBeGreaterThanOrEqual(backoffMs / 2);
      // The job is moved a few milliseconds after the attempt failed.
      expect(delay).toBeLessThanOrEqual(backoffMs + 1_000);
    }
  });

  it("pauses the whole queue, on every worker, for Retry-After when a run ends on a 429, without spending an attempt", async () => {
    nextPrefix();
    const callTimes: number[] = [];
    const sync = recordingCampaignSync(warehouse.db, "w", 10);
    const syncCampaign: SyncFunctions["syncCampaign"] = async (campaignUid, rhythm, signal): Promise<RunResult> => {
      callTimes.push(Date.now());
      if (callTimes.length === 1) return { runId: 0, outcome: "partial", failures: [{ campaignUid, stream: "leads", error: upstreamError(429, true, 2_000) }] };
      return sync(campaignUid, rhythm, signal);
    };
    // Two replicas: the one that met the 429 waits by itself; the other must wait too.
    const service = await start({ syncCampaign });
    await start({ syncCampaign });
    const queue = service.queues.campaignSync;
    await enqueueCampaignSyncs(queue, "sync-campaign", [{ account: ACCOUNT, campaignUid: "throttled" }]);
    await expect.poll(() => queue.getRateLimitTtl(), { timeout: 5_000 }).toBeGreaterThan(0);
    await expect.poll(() => queue.getCompletedCount(), { timeout: 10_000 }).toBe(1);
    expect(callTimes).toHaveLength(2);
    expect((callTimes[1] as number) - (callTimes[0] as number)).toBeGreaterThanOrEqual(1_900);
    const [completed] = await queue.getJobs(["completed"]);
    expect(completed?.attemptsMade).toBe(1);
    expect(await queue.getFailedCount()).toBe(0);
  });

  it("sends a job whose run ended on a 429 with Retry-After: 0 back to waiting, without spending an attempt or failing it", async () => {
    nextPrefix();
    let calls = 0;
    const sync = recordingCampaignSync(warehouse.db, "w", 10);
    // What HttpTransport makes of `429` + `Retry-After: 0` (or an HTTP date already past): retryAfterMs 0, not undefined.
    const syncCampaign: SyncFunctions["syncCampaign"] = async (campaignUid, rhythm, signal): Promise<RunResult> => {
      calls += 1;
      if (calls === 1) return { runId: 0, outcome: "partial", failures: [{ campaignUid, stream: "leads", error: upstreamError(429, true, 0) }] };
      return sync(campaignUid, rhythm, signal);
    };
    const service = await start({ syncCampaign });
    const queue = service.queues.campaignSync;
    await enqueueCampaignSyncs(queue, "sync-campaign", [{ account: ACCOUNT, campaignUid: "throttled" }]);
    await expect.poll(() => queue.getCompletedCount(), { timeout: 10_000 }).toBe(1);
    const [completed] = await queue.getJobs(["completed"]);
    expect(completed?.failedReason, "the job's recorded failure").toBeUndefined();
    expect(completed?.attemptsMade).toBe(1);
  });

  it("drains on close: the run in flight stops, its job waits for the next worker, which finishes it", async () => {
    nextPrefix();
    let started = false;
    const endless: SyncFunctions["syncCampaign"] = async (_campaignUid, _rhythm, signal) => {
      started = true;
      await sleep(60_000, undefined, { signal }).catch(() => undefined);
      return { runId: 0, outcome: "aborted", failures: [] };
    };
    const draining = await start({ syncCampaign: endless });
    await enqueueCampaignSyncs(draining.queues.campaignSync, "sync-campaign", [{ account: ACCOUNT, campaignUid: "long" }]);
    await expect.poll(() => started, { timeout: 5_000 }).toBe(true);
    await draining.close();
    running = running.filter((service) => service !== draining);

    const successor = await start({});
    await expect.poll(() => successor.queues.campaignSync.getCompletedCount(), { timeout: 10_000 }).toBe(1);
    expect((await intervals(warehouse.db)).map((row) => row.campaign_uid)).toEqual(["long"]);
    const [completed] = await successor.queues.campaignSync.getJobs(["completed"]);
    expect(completed?.attemptsMade).toBe(1);
  });

  it("puts a verification cut short by the drain back to waiting, without spending an attempt", async () => {
    nextPrefix();
    let started = false;
    const draining = await start(
      {
        verify: async (signal) => {
          started = true;
          await sleep(60_000, undefined, { signal });
          return 0;
        },
      },
      { env: { COLDSYNC_VERIFY_EVERY: "1h" } },
    );
    await expect.poll(() => started, { timeout: 5_000 }).toBe(true);
    await draining.close();
    running = running.filter((service) => service !== draining);

    const successor = await start({ verify: async () => 0 }, { env: { COLDSYNC_VERIFY_EVERY: "1h" } });
    await expect.poll(() => successor.queues.verification.getCompletedCount(), { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    const completed = await successor.queues.verification.getJobs(["completed"]);
    expect(completed.map((job) => job.attemptsMade)).toEqual(completed.map(() => 1));
    expect(await successor.queues.verification.getFailedCount()).toBe(0);
  });

  it("refuses jobs of another account instead of syncing them with this account's key", async () => {
    nextPrefix();
    const service = await start({});
    const job = await service.queues.campaignSync.add("sync-campaign", { account: "someone-else", campaignUid: "c-1" });
    await expect.poll(async () => (await job.getState()) as string, { timeout: 5_000 }).toBe("failed");
    expect((await service.queues.campaignSync.getJob(job.id!))?.failedReason).toMatch(/own COLDSYNC_QUEUE_PREFIX/);
  });
});
