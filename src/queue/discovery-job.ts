import type { Processor, Queue } from "bullmq";
import type { Kysely } from "kysely";
import type { Database } from "../warehouse/database.ts";
import { dueForLeads, type Cadence } from "./cadence.ts";
import { enqueueDueEvents } from "./campaign-jobs.ts";
import { processLeased, type JobReturn, type ProcessorBase, type SyncFunctions } from "./leased-job.ts";
import { enqueueCampaignSyncs, type CampaignEventsJobData, type CampaignSyncJobData, type DiscoveryJobData } from "./queues.ts";
import { isKeyRefused } from "../upstream/errors.ts";
import { settle } from "./verdict.ts";

/**
 * Discovery: walks the account (one discovery at a time per account), then
 * fans out one campaign-sync job per campaign whose leads rhythm is due, and
 * one campaign-events job per started campaign whose events are due, so that
 * a campaign seen for the first time has its events read at once (the events
 * tick covers the minutes in between).
 */

export interface DiscoveryProcessorOptions extends ProcessorBase {
  discover: SyncFunctions["discover"];
  db: Kysely<Database>;
  cadence: Cadence;
  discoveryQueue: Queue<DiscoveryJobData>;
  campaignSyncQueue: Queue<CampaignSyncJobData>;
  campaignEventsQueue: Queue<CampaignEventsJobData>;
  /** Called after each fan-out (the budget check hooks in here). */
  afterFanOut?(): Promise<void>;
}

export function discoveryProcessor(options: DiscoveryProcessorOptions): Processor<DiscoveryJobData, JobReturn> {
  return async (job, token) => {
    const enqueued: string[] = [];
    return processLeased(options, job, token, {
      scope: { kind: "discovery" },
      queue: options.discoveryQueue,
      whenBusy: async () => {
        // Taken up after a stall, this job may be the very one whose worker died holding the lease (renewed out of
        // phase with the job's lock, a lease can outlive it): nobody would fan out for it, so it steps aside and
        // runs once the lease is free.
        if (job.stalledCounter > 0) {
          await settle({ kind: "busy", reason: "the discovery lease is held, perhaps by the worker that stalled on this job" }, job, token, options.discoveryQueue, options.busyDelayMs);
        }
        // Otherwise another worker is discovering right now; its fan-out covers this tick too.
        return { runId: null, enqueued: [] };
      },
      run: async (signal) => {
        const result = await options.discover(signal);
        // A partial discovery still saw campaigns; they need not wait for the retry. A refused key would refuse
        // every campaign's job too.
        if (result.outcome !== "aborted" && !result.failures.some((failure) => isKeyRefused(failure.error))) {
          await options.keyRefusal.clear();
          const due = await dueForLeads(options.db, options.account, result.campaigns, options.cadence);
          const jobs = due.map((campaign) => ({ account: options.account, campaignUid: campaign.uid }));
          await enqueueCampaignSyncs(options.campaignSyncQueue, "sync-campaign", jobs);
          enqueued.push(...due.map((campaign) => campaign.uid));
          await enqueueDueEvents(options.db, options.campaignEventsQueue, options.account, options.cadence);
          await options.afterFanOut?.();
        }
        return result;
      },
      returnOf: (result) => ({ runId: result?.runId ?? null, enqueued }),
    });
  };
}
