import { DelayedError, UnrecoverableError, type Job, type Processor, type Queue } from "bullmq";
import type { Kysely } from "kysely";
import type { Database } from "../warehouse/database.ts";
import { dueCampaigns, type Cadence, type DiscoveredCampaign } from "./cadence.ts";
import type { LeaseScope, RunLeases } from "./run-lease.ts";
import { enqueueCampaignSyncs, type CampaignSyncJobData, type DiscoveryJobData } from "./queues.ts";
import { settle, verdictOfError, verdictOfRun, type RunResult, type Verdict } from "./verdict.ts";

/**
 * The two processors. Each runs the engine through an injected function (the
 * engine owns runs, checkpoints and sync_runs), then lets the verdict decide
 * whether BullMQ completes, retries, fails, or requeues the job.
 */

export interface DiscoveryResult extends RunResult {
  campaigns: DiscoveredCampaign[];
}

/** The engine, as the worker calls it; `signal` aborts on shutdown or when the campaign's lease is lost. */
export interface SyncFunctions {
  discover(signal: AbortSignal): Promise<DiscoveryResult>;
  syncCampaign(campaignUid: string, signal: AbortSignal): Promise<RunResult>;
}

/** What a completed job keeps as its return value (shown in Bull Board); runId is null when it had nothing to do. */
export interface JobReturn {
  runId: number | null;
  enqueued?: string[];
}

interface ProcessorBase {
  account: string;
  leases: RunLeases;
  /** Aborted when the worker shuts down. */
  shutdown: AbortSignal;
}

/** A prefix shared by two accounts would hand one account's jobs to the other's API key. */
function assertAccount(job: Job<{ account: string }>, account: string): void {
  if (job.data.account !== account) {
    throw new UnrecoverableError(
      `job ${job.id} belongs to account "${job.data.account}" but this worker syncs "${account}"; give each account its own COLDSYNC_QUEUE_PREFIX`,
    );
  }
}

/** One processor's part in the shared skeleton of processLeased(). */
interface LeasedJob<R extends RunResult> {
  scope: LeaseScope;
  /** The job's own queue, which a rate-limited verdict pauses. */
  queue: Queue;
  /** What the job does while another worker holds the lease. */
  whenBusy(): Promise<JobReturn>;
  run(signal: AbortSignal): Promise<R>;
  /** The job's return value; `result` is undefined when the run threw. */
  returnOf(result: R | undefined): JobReturn;
}

/**
 * What both processors do around their run: refuse another account's job, run
 * only while holding the scope's lease (aborted on shutdown or when the lease
 * is lost), release it whatever happens, and let the verdict settle the job.
 */
async function processLeased<R extends RunResult>(
  base: ProcessorBase,
  job: Job<{ account: string }>,
  token: string | undefined,
  leased: LeasedJob<R>,
): Promise<JobReturn> {
  assertAccount(job, base.account);
  const lease = await base.leases.acquire(base.account, leased.scope);
  if (lease === null) return leased.whenBusy();
  const signal = AbortSignal.any([base.shutdown, lease.signal]);
  let verdict: Verdict;
  let result: R | undefined;
  try {
    result = await leased.run(signal);
    verdict = verdictOfRun(result, signal);
  } catch (error) {
    verdict = verdictOfError(error, signal);
  } finally {
    await lease.release();
  }
  await settle(verdict, job, token, leased.queue);
  return leased.returnOf(result);
}

export interface DiscoveryProcessorOptions extends ProcessorBase {
  discover: SyncFunctions["discover"];
  db: Kysely<Database>;
  cadence: Cadence;
  discoveryQueue: Queue<DiscoveryJobData>;
  campaignSyncQueue: Queue<CampaignSyncJobData>;
}

export function discoveryProcessor(options: DiscoveryProcessorOptions): Processor<DiscoveryJobData, JobReturn> {
  return async (job, token) => {
    const enqueued: string[] = [];
    return processLeased(options, job, token, {
      scope: { kind: "discovery" },
      queue: options.discoveryQueue,
      // Another worker is discovering right now; its fan-out covers this tick too.
      whenBusy: async () => ({ runId: null, enqueued: [] }),
      run: async (signal) => {
        const result = await options.discover(signal);
        // A partial discovery still saw campaigns; they need not wait for the retry.
        if (result.outcome !== "aborted") {
          const due = await dueCampaigns(options.db, options.account, result.campaigns, options.cadence);
          await enqueueCampaignSyncs(
            options.campaignSyncQueue,
            due.map((campaign) => ({ account: options.account, campaignUid: campaign.uid })),
          );
          enqueued.push(...due.map((campaign) => campaign.uid));
        }
        return result;
      },
      returnOf: (result) => ({ runId: result?.runId ?? null, enqueued }),
    });
  };
}

export interface CampaignSyncProcessorOptions extends ProcessorBase {
  syncCampaign: SyncFunctions["syncCampaign"];
  campaignSyncQueue: Queue<CampaignSyncJobData>;
  /** How long a job steps aside while another worker holds its campaign's lease. */
  busyDelayMs: number;
}

export function campaignSyncProcessor(options: CampaignSyncProcessorOptions): Processor<CampaignSyncJobData, JobReturn> {
  return async (job, token) => {
    const { campaignUid } = job.data;
    return processLeased(options, job, token, {
      scope: { kind: "campaign", campaignUid },
      queue: options.campaignSyncQueue,
      whenBusy: async () => {
        // Not a failure: the campaign is being synced right now; this job runs after it.
        await job.moveToDelayed(Date.now() + options.busyDelayMs, token);
        throw new DelayedError(`campaign ${campaignUid} is being synced by another worker`);
      },
      run: (signal) => options.syncCampaign(campaignUid, signal),
      returnOf: (result) => ({ runId: result?.runId ?? null }),
    });
  };
}
