import type { Queue } from "bullmq";
import type { CampaignEventsJobData, DiscoveryJobData, Queues, RetentionJobData, VerificationJobData } from "./queues.ts";

/**
 * The job schedulers. Upserting by a fixed id makes them idempotent: every
 * replica upserts on start, and Redis holds one scheduler per account, whose
 * `every` follows the latest COLDSYNC_DISCOVER_EVERY (COLDSYNC_VERIFY_EVERY).
 */

function discoverySchedulerId(account: string): string {
  return `discovery/${account}`;
}

export async function upsertDiscoveryScheduler(queue: Queue<DiscoveryJobData>, account: string, everyMs: number): Promise<void> {
  await queue.upsertJobScheduler(discoverySchedulerId(account), { every: everyMs }, { name: "discover", data: { account } });
}

function verificationSchedulerId(account: string): string {
  return `verification/${account}`;
}

/** Schedules the periodic verification, or removes its scheduler when it is off (`everyMs` undefined). */
export async function upsertVerificationScheduler(queue: Queue<VerificationJobData>, account: string, everyMs: number | undefined): Promise<void> {
  if (everyMs === undefined) await queue.removeJobScheduler(verificationSchedulerId(account));
  else await queue.upsertJobScheduler(verificationSchedulerId(account), { every: everyMs }, { name: "verify", data: { account } });
}

function retentionSchedulerId(account: string): string {
  return `retention/${account}`;
}

/** How often the run log is pruned: each pass deletes about what the last hour aged past the retention. */
const RETENTION_EVERY_MS = 3_600_000;

/** Schedules the pruning of the run log, or removes its scheduler when COLDSYNC_RUN_RETENTION is off (`on` false). */
export async function upsertRetentionScheduler(queue: Queue<RetentionJobData>, account: string, on: boolean): Promise<void> {
  if (!on) await queue.removeJobScheduler(retentionSchedulerId(account));
  else await queue.upsertJobScheduler(retentionSchedulerId(account), { every: RETENTION_EVERY_MS }, { name: "prune", data: { account } });
}

export function eventsSchedulerId(account: string): string {
  return `events/${account}`;
}

/**
 * The tick that fans out the events rhythm, every COLDSYNC_EVENTS_EVERY; removed
 * when it is off (`everyMs` undefined), and then campaign-sync jobs read the events.
 */
export async function upsertEventsScheduler(queue: Queue<CampaignEventsJobData>, account: string, everyMs: number | undefined): Promise<void> {
  if (everyMs === undefined) await queue.removeJobScheduler(eventsSchedulerId(account));
  else await queue.upsertJobScheduler(eventsSchedulerId(account), { every: everyMs }, { name: "fan-out", data: { account } });
}

/**
 * Removes the schedulers of every account but `account` from the queues that hold schedulers, and answers their
 * ids. A prefix serves one account (docs/worker.md): a scheduler of another account is what a worker of a former
 * COLDSYNC_ACCOUNT left behind, and every job it adds would fail on this account's workers.
 */
export async function removeOtherAccountsSchedulers(
  queues: Pick<Queues, "discovery" | "campaignEvents" | "verification" | "retention">,
  account: string,
): Promise<string[]> {
  const owned: [Queue, string][] = [
    [queues.discovery, discoverySchedulerId(account)],
    [queues.campaignEvents, eventsSchedulerId(account)],
    [queues.verification, verificationSchedulerId(account)],
    [queues.retention, retentionSchedulerId(account)],
  ];
  const removed = await Promise.all(owned.map(([queue, ownId]) => removeSchedulersBut(queue, ownId)));
  return removed.flat();
}

async function removeSchedulersBut(queue: Queue, keptId: string): Promise<string[]> {
  const foreign = (await queue.getJobSchedulers()).map((scheduler) => scheduler.key).filter((id) => id !== keptId);
  for (const id of foreign) await queue.removeJobScheduler(id);
  return foreign;
}
