import { Queue, type JobsOptions } from "bullmq";
import type { Redis } from "ioredis";

/**
 * The two queues of the domain: `discovery` walks the account (workspaces,
 * domains, contact lists, campaigns) and fans out one `campaign-sync` job per
 * campaign that is due. Job data carries names only, never the API key: the
 * key stays in the worker's environment.
 */

export const QUEUE_NAMES = { discovery: "discovery", campaignSync: "campaign-sync" } as const;

export interface DiscoveryJobData {
  account: string;
}

export interface CampaignSyncJobData {
  account: string;
  campaignUid: string;
}

export interface RetrySettings {
  attempts: number;
  /** First retry delay; each further retry doubles it, with ±50% jitter so failed jobs do not return together. */
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
  all(): Queue[];
  close(): Promise<void>;
}

export interface QueuesOptions {
  /** COLDSYNC_QUEUE_PREFIX: every BullMQ key starts with it. */
  prefix: string;
  retry?: RetrySettings;
}

export function openQueues(connection: Redis, options: QueuesOptions): Queues {
  const shared = { connection, prefix: options.prefix, defaultJobOptions: defaultJobOptions(options.retry ?? DEFAULT_RETRY) };
  const discovery = new Queue<DiscoveryJobData>(QUEUE_NAMES.discovery, shared);
  const campaignSync = new Queue<CampaignSyncJobData>(QUEUE_NAMES.campaignSync, shared);
  return {
    discovery,
    campaignSync,
    all: () => [discovery, campaignSync],
    close: async () => {
      await Promise.all([discovery.close(), campaignSync.close()]);
    },
  };
}

/** One campaign-sync job per campaign at a time: a second add while one waits, runs or backs off is dropped. */
function campaignDeduplicationId(data: CampaignSyncJobData): string {
  return `${data.account}/${data.campaignUid}`;
}

/** Adds the jobs in one round trip; each keeps its deduplication id, so a campaign already queued is skipped. */
export async function enqueueCampaignSyncs(queue: Queue<CampaignSyncJobData>, campaigns: readonly CampaignSyncJobData[]): Promise<void> {
  await queue.addBulk(campaigns.map((data) => ({ name: "sync-campaign", data, opts: { deduplication: { id: campaignDeduplicationId(data) } } })));
}
