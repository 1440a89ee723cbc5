import { Worker, type Job } from "bullmq";
import type { Redis } from "ioredis";
import type { Kysely } from "kysely";
import type { Config } from "../config.ts";
import type { WorkerMetrics } from "../http/metrics.ts";
import type { Logger } from "../logger.ts";
import type { Database } from "../warehouse/database.ts";
import { isConnectionError, type DependencyWatch } from "../dependencies.ts";
import { closeRedis, connectRedis } from "./connection.ts";
import { campaignEventsProcessor, campaignSyncProcessor } from "./campaign-jobs.ts";
import { discoveryProcessor } from "./discovery-job.ts";
import type { SyncFunctions } from "./leased-job.ts";
import { DEFAULT_RETRY, openQueues, QUEUE_NAMES, type Queues, type RetrySettings } from "./queues.ts";
import { budgetWatcher, requestDemand } from "./budget.ts";
import { KeyRefusal } from "./key-refusal.ts";
import { RunLeases } from "./run-lease.ts";
import {
  removeOtherAccountsSchedulers,
  upsertDiscoveryScheduler,
  upsertEventsScheduler,
  upsertRetentionScheduler,
  upsertVerificationScheduler,
} from "./schedulers.ts";
import { retentionProcessor, verificationProcessor } from "./unleased-jobs.ts";

/**
 * One worker process: the discovery scheduler, a discovery Worker and a
 * campaign-sync Worker with `concurrency` slots. Any number of these run side
 * by side against one Redis; a process that dies mid-job loses its lock, and
 * another picks the job up as stalled and resumes from the checkpoints.
 */

export interface WorkerTuning {
  /** How long a job's lock lasts without renewal; a dead worker's job is stalled after at most lockDuration + stalledInterval. */
  lockDurationMs: number;
  stalledIntervalMs: number;
  /** Stalls after which a job is failed instead of retried (a job that kills its worker every time). */
  maxStalledCount: number;
  retry: RetrySettings;
  /** How long a run lease outlives a worker that died holding it. */
  leaseTtlMs: number;
  /** How long a job steps aside while its lease is held elsewhere (a campaign's; discovery's, for a job taken up after a stall). */
  busyDelayMs: number;
}

const DEFAULT_TUNING: WorkerTuning = {
  lockDurationMs: 30_000,
  stalledIntervalMs: 30_000,
  maxStalledCount: 2,
  retry: DEFAULT_RETRY,
  leaseTtlMs: 30_000,
  busyDelayMs: 15_000,
};

/** BullMQ's words for a job whose lock or key is gone from Redis, or that another worker holds now. */
const LOST_JOB = /could not renew lock for job|Missing lock for job|Missing key for job|Lock mismatch for job/;

export interface WorkerServiceOptions {
  config: Pick<Config, "account" | "redis" | "worker" | "api" | "runRetentionMs">;
  /** A fail-fast ("client") connection for the queues and run leases; the caller owns it and closes it after close(). */
  redis: Redis;
  db: Kysely<Database>;
  sync: SyncFunctions;
  logger: Logger;
  metrics?: WorkerMetrics;
  tuning?: Partial<WorkerTuning>;
  /** Told of Redis outages by the worker's own connections; when Redis is back, the schedulers are upserted again. */
  redisWatch?: DependencyWatch;
}

export interface WorkerService {
  queues: Queues;
  /** Stops taking jobs, aborts the runs in flight (each stops after its current page commits), waits for them, closes its blocking connection. */
  close(): Promise<void>;
}

export async function startWorkerService(options: WorkerServiceOptions): Promise<WorkerService> {
  const { config, logger, metrics } = options;
  const tuning = { ...DEFAULT_TUNING, ...options.tuning };
  const prefix = config.redis.prefix;
  // BullMQ Workers block on their connection, so they get one of their own that waits out a Redis restart.
  const blocking = connectRedis(config.redis.url, "worker", logger, options.redisWatch);
  const queueError = (error: Error) => (options.redisWatch ? options.redisWatch.failed(error) : logger.warn({ err: error }, "queue connection error"));
  const queues = openQueues(options.redis, { prefix, retry: tuning.retry, onError: queueError });
  const leases = new RunLeases(options.redis, { prefix, ttlMs: tuning.leaseTtlMs, logger });
  const keyRefusal = new KeyRefusal(options.redis, { prefix, account: config.account });
  const shutdown = new AbortController();
  const base = { account: config.account, leases, shutdown: shutdown.signal, busyDelayMs: tuning.busyDelayMs, keyRefusal };
  const workerOptions = {
    connection: blocking,
    prefix,
    lockDuration: tuning.lockDurationMs,
    stalledInterval: tuning.stalledIntervalMs,
    maxStalledCount: tuning.maxStalledCount,
    // A queue paused by queue.rateLimit() (a 429 the client could not ride out) holds its jobs back only from
    // workers that have a limiter: BullMQ reads the pause only then. This one never limits by itself.
    limiter: { max: 1_000_000, duration: 1_000 },
  };
  const workers: Worker[] = [];
  const watchBudget = budgetWatcher(logger);

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      const stopped = Promise.all(workers.map((worker) => worker.close()));
      shutdown.abort(new Error("the worker is shutting down"));
      await stopped;
      await queues.close();
      await closeRedis(blocking);
      logger.info("worker stopped");
    })();
    return closing;
  };

  // A Redis that restarted without its data forgot the schedulers (and the jobs they would fan out): they are
  // upserted again whenever Redis comes back; the first discovery they produce fans the campaigns out again.
  const upsertSchedulers = async () => {
    await upsertDiscoveryScheduler(queues.discovery, config.account, config.worker.discoverEveryMs);
    await upsertEventsScheduler(queues.campaignEvents, config.account, config.worker.eventsEveryMs);
    await upsertVerificationScheduler(queues.verification, config.account, config.worker.verifyEveryMs);
    await upsertRetentionScheduler(queues.retention, config.account, config.runRetentionMs !== undefined);
  };
  options.redisWatch?.onRecovered(async () => {
    if (closing !== undefined) return;
    await upsertSchedulers();
    logger.info("job schedulers upserted again after the Redis outage");
  });

  try {
    await removeFormerAccountsSchedulers(queues, config.account, logger);
    // This worker may carry a new key: let the events tick fan out again until the upstream refuses it too.
    await keyRefusal.clear();
    await upsertSchedulers();
    workers.push(
      new Worker(
        QUEUE_NAMES.discovery,
        discoveryProcessor({
          ...base,
          discover: options.sync.discover,
          db: options.db,
          cadence: config.worker,
          discoveryQueue: queues.discovery,
          campaignSyncQueue: queues.campaignSync,
          campaignEventsQueue: queues.campaignEvents,
          // Advice only: a failed estimate must not fail (and so repeat) a discovery whose fan-out is done.
          afterFanOut: () =>
            requestDemand(options.db, config.account, config.worker, config.api.rateLimit).then(watchBudget, (error: unknown) =>
              logger.warn({ err: error }, "could not weigh the cadences against the request budget"),
            ),
        }),
        { ...workerOptions, concurrency: 1 },
      ),
      new Worker(
        QUEUE_NAMES.campaignSync,
        campaignSyncProcessor({
          ...base,
          syncCampaign: options.sync.syncCampaign,
          queue: queues.campaignSync,
          // With the events rhythm off, one job syncs everything of a campaign, as before there were two.
          rhythm: config.worker.eventsEveryMs === undefined ? "all" : "leads",
        }),
        { ...workerOptions, concurrency: config.worker.concurrency },
      ),
      new Worker(
        QUEUE_NAMES.campaignEvents,
        campaignEventsProcessor({ ...base, syncCampaign: options.sync.syncCampaign, queue: queues.campaignEvents, db: options.db, cadence: config.worker }),
        { ...workerOptions, concurrency: config.worker.concurrency },
      ),
      new Worker(
        QUEUE_NAMES.verification,
        verificationProcessor({ account: config.account, verify: options.sync.verify, shutdown: shutdown.signal }),
        { ...workerOptions, concurrency: 1 },
      ),
      new Worker(
        QUEUE_NAMES.retention,
        retentionProcessor({ account: config.account, prune: options.sync.prune, shutdown: shutdown.signal }),
        { ...workerOptions, concurrency: 1 },
      ),
    );
    for (const worker of workers) observe(worker, logger, metrics, options.redisWatch);
    await Promise.all(workers.map((worker) => worker.waitUntilReady()));
  } catch (error) {
    // A start that fails half-way must not leave workers or the blocking connection behind.
    await close();
    throw error;
  }
  metrics?.watchQueues(queues.all());
  metrics?.watchCheckpoints({ db: options.db, account: config.account });
  logger.info({ account: config.account, concurrency: config.worker.concurrency, prefix }, "worker started");
  return { queues, close };
}

/** A worker started under a new COLDSYNC_ACCOUNT on the old prefix: the old account's schedulers would tick on, their jobs failing. */
async function removeFormerAccountsSchedulers(queues: Queues, account: string, logger: Logger): Promise<void> {
  const removed = await removeOtherAccountsSchedulers(queues, account);
  if (removed.length > 0) logger.warn({ account, removed }, "removed job schedulers of another account from this queue prefix (a prefix serves one account)");
}

function observe(worker: Worker, logger: Logger, metrics: WorkerMetrics | undefined, redisWatch: DependencyWatch | undefined): void {
  const elapsedMs = (job: Job): number => Date.now() - (job.processedOn ?? Date.now());
  worker.on("completed", (job) => {
    metrics?.observeJob(worker.name, "completed", elapsedMs(job));
    logger.info({ queue: worker.name, jobId: job.id, data: job.data, result: job.returnvalue }, "job completed");
  });
  worker.on("failed", (job, error) => {
    if (job) metrics?.observeJob(worker.name, "failed", elapsedMs(job));
    logger.warn({ queue: worker.name, jobId: job?.id, data: job?.data, attemptsMade: job?.attemptsMade, reason: error.message }, "job failed");
  });
  worker.on("stalled", (jobId) => logger.warn({ queue: worker.name, jobId }, "job stalled; it goes back to the queue"));
  worker.on("error", (error) => reportWorkerError(error, { queue: worker.name, logger, redisWatch }));
}

/**
 * A BullMQ Worker's 'error': its own Redis connections failing (reported by
 * the Redis watch, once per outage, whichever connection notices first), a job
 * it lost hold of, or something else, which is an alarm.
 */
export function reportWorkerError(error: Error, { queue, logger, redisWatch }: { queue: string; logger: Logger; redisWatch: DependencyWatch | undefined }): void {
  if (redisWatch && isConnectionError(error)) return redisWatch.failed(error);
  // A job Redis lost (a restart without its data) or another worker took up after a stall: the schedulers
  // and the next discovery bring its campaign back, and the campaign's warehouse lock keeps it from running
  // twice at once, so this is worth a warning, not an alarm.
  if (LOST_JOB.test(error.message)) logger.warn({ queue, reason: error.message }, "lost hold of a job in Redis; it is done again by whoever takes it up");
  else logger.error({ queue, err: error }, "worker error");
}
