import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { KeyRefusal } from "../../queue/key-refusal.ts";
import { QUEUE_NAMES, type CampaignSyncJobData } from "../../queue/queues.ts";
import { rateBudgetKeys } from "../../queue/rate-budget.ts";

/**
 * The worker fleet as Redis sees it: processes connected to each queue, jobs
 * per state, whether the account is paused for a Retry-After or its key was
 * refused, and for each campaign the Bull Board page of its job.
 *
 * Bull Board 9 can link to a queue (`<board>/queue/<name>`, optionally
 * `?status=<state>`) and to one job (`<board>/queue/<name>/<jobId>`); it has no
 * search by job data. So a campaign links, in each queue of campaign jobs, to
 * its waiting or running job when there is one (found through the job's
 * deduplication id), else to its latest failed or completed job among the
 * most recent ones; without any, the page links to the campaign-sync queue.
 */

export interface FleetSources {
  redis: Redis;
  queues: readonly Queue[];
  /** COLDSYNC_QUEUE_PREFIX, for the rate budget's pause key. */
  prefix: string;
  account: string;
  /** Where Bull Board is mounted, e.g. /admin/queues. */
  boardPath: string;
}

export interface QueueDepth {
  name: string;
  /** Processes with a Worker on this queue; null when Redis refuses CLIENT LIST. */
  workers: number | null;
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  completed: number;
  paused: boolean;
  /** How long the queue stays rate-limited after a 429 (ms, 0: not limited). */
  rateLimitedMs: number;
}

export interface JobLink {
  /** Relative to the status page, so the links survive a reverse proxy's path prefix. */
  href: string;
  queue: string;
  jobId: string;
  label: string;
  state: string | null;
}

export interface FleetStatus {
  /** Processes running campaign syncs (null when unknown). */
  workers: number | null;
  queues: QueueDepth[];
  /** The account's shared request budget is paused for a Retry-After (ms left, 0: not paused). */
  budgetPausedMs: number;
  /** When the upstream last refused the API key, while the events tick holds back for it (key-refusal.ts); else null. */
  keyRefusedAt: string | null;
  queuePageHref: string;
  /** Per campaign, its job in each queue of campaign jobs that has one. */
  campaignJobs: Record<string, JobLink[]>;
}

/** Failed and completed jobs read to find each campaign's latest one; the queue keeps up to 1000 of each. */
const RECENT_JOBS = 200;

/**
 * Queues whose jobs are about one campaign ({account, campaignUid}, deduplicated
 * per campaign): campaign-sync, and campaign-events where a worker splits a
 * campaign's events into a rhythm of their own.
 */
const CAMPAIGN_QUEUES: readonly string[] = [QUEUE_NAMES.campaignSync, "campaign-events"];

async function depthOf(queue: Queue): Promise<QueueDepth> {
  const [counts, paused, rateLimitTtl, workers] = await Promise.all([
    queue.getJobCounts("waiting", "paused", "active", "delayed", "prioritized", "failed", "completed"),
    queue.isPaused(),
    queue.getRateLimitTtl(),
    // CLIENT LIST is disabled on some managed Redis services; the rest of the panel still stands.
    queue.getWorkersCount().catch(() => null),
  ]);
  return {
    name: queue.name,
    workers,
    // A paused queue keeps its waiting jobs in a list of their own.
    waiting: (counts.waiting ?? 0) + (counts.paused ?? 0) + (counts.prioritized ?? 0),
    active: counts.active ?? 0,
    delayed: counts.delayed ?? 0,
    failed: counts.failed ?? 0,
    completed: counts.completed ?? 0,
    paused,
    rateLimitedMs: Math.max(0, rateLimitTtl),
  };
}

function boardHref(boardPath: string, ...parts: string[]): string {
  return [boardPath.replace(/^\/+|\/+$/g, ""), ...parts.map(encodeURIComponent)].join("/");
}

/** The deduplication id campaign-sync jobs carry (campaignDeduplicationId in src/queue/queues.ts). */
const deduplicationIdOf = (data: CampaignSyncJobData): string => `${data.account}/${data.campaignUid}`;

async function campaignJobs(queue: Queue, sources: FleetSources, campaignUids: readonly string[]): Promise<Record<string, JobLink>> {
  const link = (id: string, state: string | null): JobLink => ({
    href: boardHref(sources.boardPath, "queue", queue.name, id),
    queue: queue.name,
    jobId: id,
    label: state === null ? `job ${id}` : `job ${id} · ${state}`,
    state,
  });
  const [inFlight, failed, completed] = await Promise.all([
    Promise.all(campaignUids.map((campaignUid) => queue.getDeduplicationJobId(deduplicationIdOf({ account: sources.account, campaignUid })))),
    queue.getJobs("failed", 0, RECENT_JOBS - 1),
    queue.getJobs("completed", 0, RECENT_JOBS - 1),
  ]);
  const links: Record<string, JobLink> = {};
  // Newest first within each list; a campaign keeps the most recently finished of its jobs.
  const finishedAt: Record<string, number> = {};
  for (const [job, state] of [...failed.map((job) => [job, "failed"] as const), ...completed.map((job) => [job, "completed"] as const)]) {
    const { account, campaignUid } = (job.data ?? {}) as Partial<CampaignSyncJobData>;
    if (account !== sources.account || campaignUid === undefined || job.id === undefined) continue;
    const at = job.finishedOn ?? 0;
    if ((finishedAt[campaignUid] ?? -1) >= at) continue;
    finishedAt[campaignUid] = at;
    links[campaignUid] = link(job.id, state);
  }
  await Promise.all(
    campaignUids.map(async (campaignUid, index) => {
      const id = inFlight[index];
      if (!id) return;
      links[campaignUid] = link(id, await queue.getJobState(id).catch(() => null));
    }),
  );
  return links;
}

export async function fleetStatus(sources: FleetSources, campaignUids: readonly string[]): Promise<FleetStatus> {
  const campaignQueues = sources.queues.filter((queue) => CAMPAIGN_QUEUES.includes(queue.name));
  const [queues, budgetPause, keyRefusedAt, jobsPerQueue] = await Promise.all([
    Promise.all(sources.queues.map(depthOf)),
    sources.redis.pttl(rateBudgetKeys(sources.prefix, sources.account).pause),
    new KeyRefusal(sources.redis, sources).refusedAt(),
    Promise.all(campaignQueues.map((queue) => campaignJobs(queue, sources, campaignUids))),
  ]);
  const jobs: Record<string, JobLink[]> = {};
  for (const links of jobsPerQueue) for (const [campaignUid, link] of Object.entries(links)) (jobs[campaignUid] ??= []).push(link);
  return {
    workers: queues.find((queue) => queue.name === QUEUE_NAMES.campaignSync)?.workers ?? null,
    queues,
    budgetPausedMs: Math.max(0, budgetPause),
    keyRefusedAt: keyRefusedAt?.toISOString() ?? null,
    queuePageHref: boardHref(sources.boardPath, "queue", QUEUE_NAMES.campaignSync),
    campaignJobs: jobs,
  };
}
