import type { Processor, Queue } from "bullmq";
import type { Kysely } from "kysely";
import type { Rhythm } from "../sync/campaign-sync.ts";
import type { Database } from "../warehouse/database.ts";
import { dueForEvents, type Cadence } from "./cadence.ts";
import { assertAccount, processLeased, type JobReturn, type ProcessorBase, type SyncFunctions } from "./leased-job.ts";
import { enqueueCampaignSyncs, type CampaignEventsJobData, type CampaignSyncJobData } from "./queues.ts";
import { settle } from "./verdict.ts";

/**
 * A campaign's two rhythms as jobs. `campaign-sync` runs the leads rhythm
 * (detail, leads walk, sequences), or everything when events are off;
 * `campaign-events` runs the events rhythm (replies, click and open tails, the
 * touched leads refreshed) and the tick that fans it out. Each rhythm has its
 * own lease, so the two may run side by side for one campaign, never two of
 * one rhythm.
 */

export interface CampaignProcessorOptions extends ProcessorBase {
  syncCampaign: SyncFunctions["syncCampaign"];
}

function runCampaign(options: CampaignProcessorOptions, rhythm: Rhythm, queue: Queue) {
  return (job: Parameters<Processor<CampaignSyncJobData>>[0], token: string | undefined, campaignUid: string) =>
    processLeased(options, job, token, {
      scope: { kind: "campaign", campaignUid, rhythm },
      queue,
      // Not a failure: the campaign is being synced right now; this job runs after it.
      whenBusy: async () => {
        await settle({ kind: "busy", reason: `campaign ${campaignUid} (${rhythm}) is being synced by another worker` }, job, token, queue, options.busyDelayMs);
        return { runId: null };
      },
      run: (signal) => options.syncCampaign(campaignUid, rhythm, signal),
      returnOf: (result) => ({ runId: result?.runId ?? null }),
    });
}

/** `rhythm` is `leads`, or `all` when the events rhythm is off (COLDSYNC_EVENTS_EVERY=off). */
export function campaignSyncProcessor(options: CampaignProcessorOptions & { queue: Queue<CampaignSyncJobData>; rhythm: "leads" | "all" }): Processor<CampaignSyncJobData, JobReturn> {
  const run = runCampaign(options, options.rhythm, options.queue);
  return async (job, token) => run(job, token, job.data.campaignUid);
}

export interface CampaignEventsProcessorOptions extends CampaignProcessorOptions {
  queue: Queue<CampaignEventsJobData>;
  db: Kysely<Database>;
  cadence: Cadence;
}

/** The events queue: a `fan-out` tick enqueues the campaigns whose events are due; each `sync-events` job reads one. */
export function campaignEventsProcessor(options: CampaignEventsProcessorOptions): Processor<CampaignEventsJobData, JobReturn> {
  const run = runCampaign(options, "events", options.queue as unknown as Queue);
  return async (job, token) => {
    const campaignUid = job.data.campaignUid;
    if (campaignUid !== undefined) return run(job as Parameters<Processor<CampaignSyncJobData>>[0], token, campaignUid);
    // The tick reads only the warehouse: it costs no request upstream, but each job it enqueues does.
    assertAccount(job, options.account);
    const refusedAt = await options.keyRefusal.refusedAt();
    if (refusedAt !== null) {
      return { runId: null, enqueued: [], heldBack: `the upstream refused the API key (401) at ${refusedAt.toISOString()}; held back until a discovery is not refused` };
    }
    return { runId: null, enqueued: await enqueueDueEvents(options.db, options.queue, options.account, options.cadence) };
  };
}

/** Enqueues one `sync-events` job per campaign of `account` whose events rhythm is due; answers their uids. */
export async function enqueueDueEvents(db: Kysely<Database>, queue: Queue<CampaignEventsJobData>, account: string, cadence: Cadence): Promise<string[]> {
  const due = await dueForEvents(db, account, cadence);
  await enqueueCampaignSyncs(queue, "sync-events", due.map((campaignUid) => ({ account, campaignUid })));
  return due;
}
