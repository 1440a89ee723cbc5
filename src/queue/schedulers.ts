import type { Queue } from "bullmq";
import type { DiscoveryJobData } from "./queues.ts";

/**
 * The discovery job scheduler. Upserting by a fixed id makes it idempotent:
 * every replica upserts on start, and Redis holds one scheduler per account,
 * whose `every` follows the latest COLDSYNC_DISCOVER_EVERY.
 */

function discoverySchedulerId(account: string): string {
  return `discovery/${account}`;
}

export async function upsertDiscoveryScheduler(queue: Queue<DiscoveryJobData>, account: string, everyMs: number): Promise<void> {
  await queue.upsertJobScheduler(discoverySchedulerId(account), { every: everyMs }, { name: "discover", data: { account } });
}
