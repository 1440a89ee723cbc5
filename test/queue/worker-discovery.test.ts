import { Worker, type Queue } from "bullmq";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { openQueues, QUEUE_NAMES } from "../../src/queue/queues.ts";
import { RunLeases } from "../../src/queue/run-lease.ts";
import { upsertDiscoveryScheduler } from "../../src/queue/schedulers.ts";
import { UpstreamError } from "../../src/upstream/errors.ts";
import { upsert } from "../../src/warehouse/upsert.ts";
import { campaignListingRow } from "../warehouse/rows.ts";
import { ACCOUNT, fixedDiscovery, intervals, useWorkerServices } from "./harness.ts";

const services = useWorkerServices("worker_discovery");
const { nextPrefix, start, warehouse } = services;

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
    await services.close(before);
    const after = await start({});
    const { discovery, campaignEvents, verification, retention } = after.queues;
    expect((await discovery.getJobSchedulers()).map((scheduler) => scheduler.key)).toEqual([`discovery/${ACCOUNT}`]);
    expect((await campaignEvents.getJobSchedulers()).map((scheduler) => scheduler.key)).toEqual([`events/${ACCOUNT}`]);
    expect(await verification.getJobSchedulers()).toEqual([]);
    expect((await retention.getJobSchedulers()).map((scheduler) => scheduler.key)).toEqual([`retention/${ACCOUNT}`]);
    const linedUp = [discovery, campaignEvents, verification, retention].map((queue) => (queue as Queue).getJobs(["delayed", "waiting"]));
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

  it("prunes the run log every hour unless COLDSYNC_RUN_RETENTION is off, and keeps what it deleted as the job's result", async () => {
    nextPrefix();
    const before = new Date("2026-11-01T00:00:00Z");
    let pruned = 0;
    const on = await start({
      prune: async () => {
        pruned += 1;
        return { before, syncRuns: 12, verifications: 1 };
      },
    });
    const schedulers = await on.queues.retention.getJobSchedulers();
    expect(schedulers).toHaveLength(1);
    expect(schedulers[0]).toMatchObject({ every: 3_600_000, template: { data: { account: ACCOUNT } } });
    // A scheduler's first job runs at once.
    await expect.poll(() => on.queues.retention.getCompletedCount(), { timeout: 10_000 }).toBeGreaterThan(0);
    expect(pruned).toBeGreaterThan(0);
    const [completed] = await on.queues.retention.getJobs(["completed"]);
    expect(completed?.returnvalue).toEqual({ before: before.toISOString(), syncRuns: 12, verifications: 1 });
    // A worker started with the retention off turns it off for everyone.
    await start({}, { env: { COLDSYNC_RUN_RETENTION: "off" } });
    expect(await on.queues.retention.getJobSchedulers()).toEqual([]);
  });

  it("fans discovery out to one campaign-sync job per due campaign", async () => {
    nextPrefix();
    // Due is judged from what was synced: the campaign's detail was read and its leads walked a moment ago.
    await warehouse().db
      .insertInto("sync_checkpoints")
      .values(
        ["campaign_detail", "leads"].map((stream) => ({ account: ACCOUNT, campaign_uid: "synced-just-now", stream, last_complete_scan_at: new Date(), updated_at: new Date() })),
      )
      .execute();
    const service = await start({
      discover: fixedDiscovery(warehouse().db, [
        { uid: "live", status: "running" },
        { uid: "waiting", status: "created" },
        { uid: "done", status: "complete" },
        { uid: "synced-just-now", status: "running" },
      ]),
    });
    await expect.poll(async () => (await intervals(warehouse().db)).map((row) => row.campaign_uid).sort(), { timeout: 10_000 }).toEqual(["done", "live", "waiting"]);
    await expect.poll(() => service.queues.discovery.getCompletedCount(), { timeout: 5_000 }).toBe(1);
    const [discovery] = await service.queues.discovery.getJobs(["completed"]);
    expect(discovery?.returnvalue.enqueued.sort()).toEqual(["done", "live", "waiting"]);
  });

  it("fans nothing out after a discovery whose key the upstream refused (401): every campaign's job would be refused too", async () => {
    nextPrefix();
    const refused = new UpstreamError("rejected", { endpoint: "/api/v1/workspaces/", method: "GET", status: 401, retryable: false });
    const found = fixedDiscovery(warehouse().db, [{ uid: "live", status: "running" }]);
    const service = await start({
      discover: async (signal) => ({ ...(await found(signal)), outcome: "failed", failures: [{ campaignUid: null, stream: "run", error: refused }] }),
    });
    await expect.poll(() => service.queues.discovery.getFailedCount(), { timeout: 10_000 }).toBe(1);
    expect(await service.queues.campaignSync.getJobCounts()).toMatchObject({ waiting: 0, delayed: 0, active: 0, completed: 0 });
    expect((await service.queues.discovery.getJobs(["failed"]))[0]?.failedReason).toMatch(/401/);
  });

  it("holds the events tick back after the upstream refused the key (401), until a discovery is not refused", async () => {
    nextPrefix();
    const db = warehouse().db;
    await upsert(db, "campaigns", [campaignListingRow("started", { started_running_at: new Date() })], new Date());
    try {
      const refused = new UpstreamError("rejected", { endpoint: "/api/v1/campaigns/started/replies/", method: "GET", status: 401, retryable: false });
      let keyMended = false;
      let eventsRuns = 0;
      let discoveries = 0;
      const service = await start(
        {
          syncCampaign: async (campaignUid) => {
            eventsRuns += 1;
            return keyMended ? { runId: 0, outcome: "succeeded", failures: [] } : { runId: 0, outcome: "failed", failures: [{ campaignUid, stream: "replies", error: refused }] };
          },
          discover: async () => {
            discoveries += 1;
            return { runId: 0, outcome: "succeeded", failures: [], campaigns: [] };
          },
        },
        { env: { COLDSYNC_EVENTS_EVERY: "200ms" } },
      );
      const { campaignEvents, discovery } = service.queues;
      const ticks = async () => (await campaignEvents.getJobs(["completed"])).filter((job) => job.name === "fan-out");
      // The first tick's job is refused; the ticks after it enqueue nothing, though the campaign's events stay due.
      await expect.poll(async () => (await campaignEvents.getJobs(["failed"])).length, { timeout: 10_000 }).toBe(1);
      await expect.poll(async () => (await ticks()).filter((job) => job.returnvalue.heldBack !== undefined).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
      expect(eventsRuns).toBe(1);
      expect((await ticks()).find((job) => job.returnvalue.heldBack !== undefined)?.returnvalue.heldBack).toMatch(/refused the API key \(401\)/);
      // The key is mended upstream; the next discovery is not refused, and the tick fans the campaign out again.
      keyMended = true;
      await discovery.add("discover", { account: ACCOUNT });
      await expect.poll(() => discoveries, { timeout: 10_000 }).toBe(2);
      await expect.poll(() => eventsRuns, { timeout: 10_000 }).toBeGreaterThan(1);
    } finally {
      await db.deleteFrom("campaigns").execute();
    }
  });

  it("completes a discovery tick without discovering while another worker discovers: that one's fan-out covers it", async () => {
    const prefix = nextPrefix();
    let discoveries = 0;
    const service = await start({
      discover: async () => {
        discoveries += 1;
        return { runId: 0, outcome: "succeeded", failures: [], campaigns: [] };
      },
    });
    // The scheduler's first tick, at start, discovers; then another worker starts discovering.
    await expect.poll(() => service.queues.discovery.getCompletedCount(), { timeout: 5_000 }).toBe(1);
    const other = new Redis(services.redisUrl);
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
    const prefix = nextPrefix();
    const observer = new Redis(services.redisUrl, { maxRetriesPerRequest: null });
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
    const discover = fixedDiscovery(warehouse().db, [{ uid: "c-1", status: "running" }]);
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
});
