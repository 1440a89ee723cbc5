import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { SyncFunctions } from "../../src/queue/leased-job.ts";
import { enqueueCampaignSyncs } from "../../src/queue/queues.ts";
import type { RunResult } from "../../src/queue/verdict.ts";
import { UpstreamError } from "../../src/upstream/errors.ts";
import { ACCOUNT, intervals, overlaps, recordingCampaignSync, useWorkerServices } from "./harness.ts";

const services = useWorkerServices("worker");
const { nextPrefix, start, warehouse } = services;

const upstreamError = (status: number, retryable: boolean, retryAfterMs?: number) =>
  new UpstreamError(`answered ${status}`, { endpoint: "/api/v1/leads/", method: "GET", status, retryable, retryAfterMs });

describe("worker service", () => {
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
    const first = await start({ syncCampaign: recordingCampaignSync(warehouse().db, "first", 150) });
    await start({ syncCampaign: recordingCampaignSync(warehouse().db, "second", 150) });
    const campaigns = ["c-1", "c-2", "c-3"];
    // Plain adds, without the deduplication id: only the run lease keeps these apart.
    const jobs = campaigns.flatMap((campaignUid) => [1, 2, 3].map(() => ({ name: "sync-campaign", data: { account: ACCOUNT, campaignUid } })));
    await first.queues.campaignSync.addBulk(jobs);
    await expect.poll(async () => (await intervals(warehouse().db)).length, { timeout: 15_000 }).toBe(jobs.length);
    const rows = await intervals(warehouse().db);
    expect(overlaps(rows)).toEqual([]);
    expect(new Set(rows.map((row) => row.worker))).toEqual(new Set(["first", "second"]));
  });

  it("retries a retryable failure and fails a 401 at once with its reason", async () => {
    nextPrefix();
    let flakyCalls = 0;
    const sync = recordingCampaignSync(warehouse().db, "w", 10);
    const service = await start({
      syncCampaign: async (campaignUid, rhythm, signal): Promise<RunResult> => {
        if (campaignUid === "refused") return { runId: 0, outcome: "failed", failures: [{ campaignUid, stream: "campaign_detail", error: upstreamError(401, false) }] };
        flakyCalls += 1;
        if (flakyCalls === 1) throw upstreamError(503, true);
        return sync(campaignUid, rhythm, signal);
      },
    });
    const queue = service.queues.campaignSync;
    await enqueueCampaignSyncs(queue, "sync-campaign", [{ account: ACCOUNT, campaignUid: "flaky" }]);
    await enqueueCampaignSyncs(queue, "sync-campaign", [{ account: ACCOUNT, campaignUid: "refused" }]);
    await expect.poll(() => queue.getCompletedCount(), { timeout: 10_000 }).toBe(1);
    await expect.poll(() => queue.getFailedCount(), { timeout: 10_000 }).toBe(1);
    const [completed] = await queue.getJobs(["completed"]);
    const [failed] = await queue.getJobs(["failed"]);
    expect(completed).toMatchObject({ data: { campaignUid: "flaky" }, attemptsMade: 2 });
    expect(failed).toMatchObject({ data: { campaignUid: "refused" }, attemptsMade: 1 });
    expect(failed?.failedReason).toMatch(/401.*campaign_detail of campaign refused/);
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
    const sync = recordingCampaignSync(warehouse().db, "w", 10);
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
    const sync = recordingCampaignSync(warehouse().db, "w", 10);
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
    await services.close(draining);

    const successor = await start({});
    await expect.poll(() => successor.queues.campaignSync.getCompletedCount(), { timeout: 10_000 }).toBe(1);
    expect((await intervals(warehouse().db)).map((row) => row.campaign_uid)).toEqual(["long"]);
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
    await services.close(draining);

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
