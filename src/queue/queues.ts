import { Queue, type JobsOptions } from "bullmq";
import type { Redis } from "ioredis";

/**
 * The queues of the domain: `discovery` walks the account (workspaces,
 * domains, contact lists, campaigns) and fans out one `campaign-sync` job per
 * campaign whose leads rhythm is due; `campaign-events` reads the replies,
 * clicks and opens of started campaigns, fanned out by a tick of its own;
 * `verification` reconciles the warehouse with the upstream when
 * COLDSYNC_VERIFY_EVERY asks for it; `retention` prunes the run log past
 * COLDSYNC_RUN_RETENTION. Job data carries names only, never the API key: the
 * key stays in the worker's environment.
 */

export const QUEUE_NAMES = {
  discovery: "discovery",
  campaignSync: "campaign-sync",
  campaignEvents: "campaign-events",
  verification: "verification",
  retention: "retention",
} as const;

export interface DiscoveryJobData {
  account: string;
}

export interface CampaignSyncJobData {
  account: string;
  campaignUid: string;
}

export interface VerificationJobData {
  account: string;
}

export interface RetentionJobData {
  account: string;
}

/** The events queue holds the fan-out tick (`fan-out`, account only) and one `sync-events` job per campaign. */
export type CampaignEventsJobData = { account: string; campaignUid?: string };

export interface RetrySettings {
  attempts: number;
  /**
   * First retry's backoff; each further retry doubles it. The wait is drawn
   * between half the backoff and the whole of it (BullMQ's jitter 0.5), so
   * that jobs that failed together do not return together.
   */
  backoffMs: number;
}

export const DEFAULT_RETRY: RetrySettings = { attempts: 5, backoffMs: 30_000 };

const ONE_DAY_S = 24 * 60 * 60;

function defaultJobOptions(retry: RetrySettings): JobsOptions {
  return {
    attempts: retry.attempts,
    backoff: { type: "exponential", delay: retry.backoffMs, jitter: 0.5 },
    removeOnComplete: { age: ONE_DAY_S, count: 1000 },
    removeOnFail: { count: 1000 },
  };
}

export interface Queues {
  discovery: Queue<DiscoveryJobData>;
  campaignSync: Queue<CampaignSyncJobData>;
  campaignEvents: Queue<CampaignEventsJobData>;
  verification: Queue<VerificationJobData>;
  retention: Queue<RetentionJobData>;
  all(): Queue[];
  close(): Promise<void>;
}

export interface QueuesOptions {
  /** COLDSYNC_QUEUE_PREFIX: every BullMQ key starts with it. */
  prefix: string;
  retry?: RetrySettings;
  /**
   * Where the queues' connection errors go. A BullMQ queue with no listener prints them to stderr
   * itself, outside the JSON log stream, so every queue gets one.
   */
  onError?: (error: Error) => void;
}

export function openQueues(connection: Redis, options: QueuesOptions): Queues {
  const shared = { connection, prefix: options.prefix, defaultJobOptions: defaultJobOptions(options.retry ?? DEFAULT_RETRY) };
  const discovery = new Queue<DiscoveryJobData>(QUEUE_NAMES.discovery, shared);
  const campaignSync = new Queue<CampaignSyncJobData>(QUEUE_NAMES.campaignSync, shared);
  const campaignEvents = new Queue<CampaignEventsJobData>(QUEUE_NAMES.campaignEvents, shared);
  const verification = new Queue<VerificationJobData>(QUEUE_NAMES.verification, shared);
  const retention = new Queue<RetentionJobData>(QUEUE_NAMES.retention, shared);
  const all = [discovery, campaignSync, campaignEvents, verification, retention];
  for (const queue of all) queue.on("error", options.onError ?? (() => undefined));
  return {
    discovery,
    campaignSync,
    campaignEvents,
    verification,
    retention,
    all: () => all,
    close: async () => {
      await Promise.all(all.map((queue) => queue.close()));
    },
  };
}

/** One campaign-sync job per campaign at a time: a second add while one waits, runs or backs off is dropped. */
function campaignDeduplicationId(data: CampaignSyncJobData): string {
  return `${data.account}/${data.campaignUid}`;
}

/**
 * Adds the jobs in one round trip; each keeps its deduplication id, so a
 * campaign already queued (or running, or backing off) in that queue is skipped.
 */
export async function enqueueCampaignSyncs<D extends { account: string }>(queue: Queue<D>, name: string, campaigns: readonly (CampaignSyncJobData & D)[]): Promise<void> {
  // BullMQ's types thread the job name through a conditional type that a generic `D` cannot satisfy.
  await (queue as unknown as Queue<CampaignSyncJobData>).addBulk(
    campaigns.map((data) => ({ name, data, opts: { deduplication: { id: campaignDeduplicationId(data) } } })),
  );
}
