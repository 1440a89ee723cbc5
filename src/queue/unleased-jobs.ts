import { WaitingError, type Job, type Processor } from "bullmq";
import type { PruneResult } from "../sync/retention.ts";
import { assertAccount, type SyncFunctions } from "./leased-job.ts";
import type { RetentionJobData, VerificationJobData } from "./queues.ts";

/**
 * The account's jobs that take no lease: the periodic verification reads and
 * compares, never writes synced rows, and the retention job deletes only runs
 * that finished long ago, skipping rows another pruner holds; two at once
 * would only cost requests or work, and a failure is retried like any job's.
 * One cut short by the worker's drain goes back to waiting without spending
 * an attempt, so deploys do not use its retries up.
 */

export interface UnleasedProcessorOptions {
  account: string;
  shutdown: AbortSignal;
}

function unleasedProcessor<D extends { account: string }, R>(options: UnleasedProcessorOptions, work: (signal: AbortSignal) => Promise<R>): Processor<D, R> {
  return async (job: Job<D>, token) => {
    assertAccount(job, options.account);
    try {
      return await work(options.shutdown);
    } catch (error) {
      if (!options.shutdown.aborted) throw error;
      await job.moveToWait(token);
      throw new WaitingError("the worker is shutting down");
    }
  };
}

export function verificationProcessor(options: UnleasedProcessorOptions & Pick<SyncFunctions, "verify">): Processor<VerificationJobData, { problems: number }> {
  return unleasedProcessor(options, async (signal) => ({ problems: await options.verify(signal) }));
}

/** The job's return value, shown in Bull Board: what it deleted, and before when (null: the retention is off). */
export type RetentionJobReturn = (Omit<PruneResult, "before"> & { before: string }) | null;

export function retentionProcessor(options: UnleasedProcessorOptions & Pick<SyncFunctions, "prune">): Processor<RetentionJobData, RetentionJobReturn> {
  return unleasedProcessor(options, async (signal) => {
    const pruned = await options.prune(signal);
    return pruned && { ...pruned, before: pruned.before.toISOString() };
  });
}
