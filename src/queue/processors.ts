import { DelayedError, UnrecoverableError, type Job, type Processor, type Queue } from "bullmq";
import type { Kysely } from "kysely";
import type { Database } from "../warehouse/database.ts";
import { dueCampaigns, type Cadence, type DiscoveredCampaign } from "./cadence.ts";
import type { RunLeases } from "./run-lease.ts";
import { enqueueCampaignSync, type CampaignSyncJobData, type DiscoveryJobData } from "./queues.ts";
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

export interface DiscoveryProcessorOptions extends ProcessorBase {
  discover: SyncFunctions["discover"];
  db: Kysely<Database>;
  cadence: Cadence;
  discoveryQueue: Queue<DiscoveryJobData>;
  campaignSyncQueue: Queue<CampaignSyncJobData>;
}

export function discoveryProcessor(options: DiscoveryProcessorOptions): Processor<DiscoveryJobData, JobReturn> {
  return async (job, token) => {
    assertAccount(job, options.account);
    const lease = await options.leases.acquire(options.account, { kind: "discovery" });
    // Another worker is discovering right now; its fan-out covers this tick too.
    if (lease === null) return { runId: null, enqueued: [] };
    const signal = AbortSignal.any([options.shutdown, lease.signal]);
    let verdict: Verdict;
    let result: DiscoveryResult | undefined;
    const enqueued: string[] = [];
    try {
      result = await options.discover(signal);
      // A partial discovery still saw campaigns; they need not wait for the retry.
      if (result.outcome !== "aborted") {
        for (const campaign of await dueCampaigns(options.db, options.account, result.campaigns, options.cadence)) {
          await enqueueCampaignSync(options.campaignSyncQueue, { account: options.account, campaignUid: campaign.uid });
          enqueued.push(campaign.uid);
        }
      }
      verdict = verdictOfRun(result, signal);
    } catch (error) {
      verdict = verdictOfError(error, signal);
    } finally {
      await lease.release();
    }
    await settle(verdict, job, token, options.discoveryQueue);
    return { runId: result?.runId ?? null, enqueued };
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
    assertAccount(job, options.account);
    const { campaignUid } = job.data;
    const lease = await options.leases.acquire(options.account, { kind: "campaign", campaignUid });
    if (lease === null) {
      // Not a failure: the campaign is being synced right now; this job runs after it.
      await job.moveToDelayed(Date.now() + options.busyDelayMs, token);
      throw new DelayedError(`campaign ${campaignUid} is being synced by another worker`);
    }
    const signal = AbortSignal.any([options.shutdown, lease.signal]);
    let verdict: Verdict;
    let result: RunResult | undefined;
    try {
      result = await options.syncCampaign(campaignUid, signal);
      verdict = verdictOfRun(result, signal);
    } catch (error) {
      verdict = verdictOfError(error, signal);
    } finally {
      await lease.release();
    }
    await settle(verdict, job, token, options.campaignSyncQueue);
    return { runId: result?.runId ?? null };
  };
}
