import type { Processor } from "bullmq";
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
 * retried like any job's.
 */
export function verificationProcessor(options: VerificationProcessorOptions): Processor<VerificationJobData, { problems: number }> {
  return async (job) => {
    assertAccount(job, options.account);
    return { problems: await options.verify(options.shutdown) };
  };
}
