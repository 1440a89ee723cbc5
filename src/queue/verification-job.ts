import { WaitingError, type Processor } from "bullmq";
import { assertAccount, type SyncFunctions } from "./leased-job.ts";
import type { VerificationJobData } from "./queues.ts";

export interface VerificationProcessorOptions {
  account: string;
  verify: SyncFunctions["verify"];
  shutdown: AbortSignal;
}

/**
 * The periodic verification: it reads and compares, never writes synced rows,
 * so two at once would only cost requests; it needs no lease, and a failure is
 * retried like any job's. One cut short by the worker's drain goes back to
 * waiting without spending an attempt, so deploys do not use its retries up.
 */
export function verificationProcessor(options: VerificationProcessorOptions): Processor<VerificationJobData, { problems: number }> {
  return async (job, token) => {
    assertAccount(job, options.account);
    try {
      return { problems: await options.verify(options.shutdown) };
    } catch (error) {
      if (!options.shutdown.aborted) throw error;
      await job.moveToWait(token);
      throw new WaitingError("the worker is shutting down");
    }
  };
}
