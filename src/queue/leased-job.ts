import { UnrecoverableError, type Job, type Queue } from "bullmq";
import type { Rhythm } from "../sync/campaign-sync.ts";
import type { PruneResult } from "../sync/retention.ts";
import type { DiscoveredCampaign } from "./cadence.ts";
import type { KeyRefusal } from "./key-refusal.ts";
import type { LeaseScope, RunLeases } from "./run-lease.ts";
import { settle, verdictOfError, verdictOfRun, type RunResult, type Verdict } from "./verdict.ts";
import { LinkedSignal } from "../linked-signal.ts";

/**
 * What every processor shares: the engine it calls (injected; the engine owns
 * runs, checkpoints and sync_runs), the refusal of another account's job, and
 * the skeleton of a leased run whose verdict decides whether BullMQ completes,
 * retries, fails, delays or requeues the job.
 */

export interface DiscoveryResult extends RunResult {
  campaigns: DiscoveredCampaign[];
}

/** The engine, as the worker calls it; `signal` aborts on shutdown or when the job's lease is lost. */
export interface SyncFunctions {
  discover(signal: AbortSignal): Promise<DiscoveryResult>;
  syncCampaign(campaignUid: string, rhythm: Rhythm, signal: AbortSignal): Promise<RunResult>;
  /** Reconciles the warehouse with the upstream; resolves to the number of checks that were not ok. */
  verify(signal: AbortSignal): Promise<number>;
  /** Deletes the run log past COLDSYNC_RUN_RETENTION; resolves to null when the retention is off. */
  prune(signal: AbortSignal): Promise<PruneResult | null>;
}

/** What a completed job keeps as its return value (shown in Bull Board); runId is null when it had nothing to do. */
export interface JobReturn {
  runId: number | null;
  enqueued?: string[];
  /** Why a tick enqueued nothing it found due. */
  heldBack?: string;
}

export interface ProcessorBase {
  account: string;
  leases: RunLeases;
  /** Aborted when the worker shuts down. */
  shutdown: AbortSignal;
  /** How long a job steps aside while its scope is held elsewhere (another worker's lease, another process's lock). */
  busyDelayMs: number;
  /** Marked when the upstream refuses the API key. */
  keyRefusal: KeyRefusal;
}

/** A prefix shared by two accounts would hand one account's jobs to the other's API key. */
export function assertAccount(job: Job<{ account: string }>, account: string): void {
  if (job.data.account !== account) {
    throw new UnrecoverableError(
      `job ${job.id} belongs to account "${job.data.account}" but this worker syncs "${account}"; give each account its own COLDSYNC_QUEUE_PREFIX`,
    );
  }
}

/** One processor's part in the shared skeleton of processLeased(). */
export interface LeasedJob<R extends RunResult> {
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
 * What the processors do around their run: refuse another account's job, run
 * only while holding the scope's lease (aborted on shutdown or when the lease
 * is lost), release it whatever happens, mark a refused key, and let the
 * verdict settle the job.
 */
export async function processLeased<R extends RunResult>(
  base: ProcessorBase,
  job: Job<{ account: string }>,
  token: string | undefined,
  leased: LeasedJob<R>,
): Promise<JobReturn> {
  assertAccount(job, base.account);
  const lease = await base.leases.acquire(base.account, leased.scope);
  if (lease === null) return leased.whenBusy();
  const linked = new LinkedSignal([base.shutdown, lease.signal]);
  const signal = linked.signal;
  let verdict: Verdict;
  let result: R | undefined;
  try {
    result = await leased.run(signal);
    verdict = verdictOfRun(result, signal);
  } catch (error) {
    verdict = verdictOfError(error, signal);
  } finally {
    linked.dispose();
    await lease.release();
  }
  if (verdict.kind === "refused") await base.keyRefusal.mark();
  await settle(verdict, job, token, leased.queue, base.busyDelayMs);
  return leased.returnOf(result);
}
