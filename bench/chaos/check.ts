import { sql, type Kysely } from "kysely";
import { Redis } from "ioredis";
import { TRUTH_ENTITIES, type GroundTruth } from "../../src/emulator/options.ts";
import { openQueues } from "../../src/queue/queues.ts";
import { UpstreamClient } from "../../src/upstream/client.ts";
import { INSTANT_SQL_FORMAT, parseInstant } from "../../src/upstream/instant.ts";
import type { Database } from "../../src/warehouse/database.ts";
import { diffWithTruth, warehouseKeys } from "../../test/support/truth.ts";

/**
 * What the chaos run checks at the end: the warehouse equals the emulator's
 * ground truth (every entity's keys, and the values that change over time),
 * no run is left `running`, no job is stuck.
 */

export interface Difference {
  what: string;
  missing: string[];
  extra: string[];
}

/** Keys that stand more than once in a sorted list. */
function duplicatesOf(sortedKeys: readonly string[]): string[] {
  return sortedKeys.filter((key, index) => index > 0 && sortedKeys[index - 1] === key).slice(0, 5);
}

/** Entity by entity, the warehouse's live keys against the truth's, and any key held twice. */
export async function keyDifferences(db: Kysely<Database>, truth: GroundTruth): Promise<Difference[]> {
  const held = await warehouseKeys(db);
  const differences: Difference[] = Object.entries(diffWithTruth(truth, held)).map(([what, difference]) => ({ what, ...difference }));
  for (const entity of TRUTH_ENTITIES) {
    const duplicates = duplicatesOf(held[entity]);
    if (duplicates.length > 0) differences.push({ what: `${entity}: rows held twice`, missing: [], extra: duplicates });
  }
  return differences;
}

const instant = sql.raw(`'${INSTANT_SQL_FORMAT}'`);

/** Values that change over time, read from the upstream (with faults off) and compared with the warehouse's. */
export async function valueDifferences(db: Kysely<Database>, apiUrl: string, apiKey: string): Promise<Difference[]> {
  const client = new UpstreamClient({ baseUrl: apiUrl, apiKey, requestsPerSecond: 5_000, concurrency: 8 });
  const expected = new Map<string, string>();
  try {
    for await (const page of client.pages("campaigns", {})) {
      for (const { value: campaign } of page.records) {
        expected.set(`campaign ${campaign.uid}`, String(campaign.status));
        for await (const leads of client.pages("leads", { campaignUid: campaign.uid })) {
          for (const { value: lead } of leads.records) {
            if (lead.contact) expected.set(`contact ${lead.contact.id}`, `${lead.contact.bounced}|${lead.contact.unsubscribed}`);
            for (const item of lead.schedules ?? []) {
              if (item === null) continue;
              expected.set(`schedule ${item.id}`, `${item.status}|${parseInstant(item.sent_on ?? "") ?? null}|${item.reply_received}|${item.email_opened}|${item.email_open_count}`);
            }
          }
        }
      }
    }
  } finally {
    await client.close();
  }
  const held = new Map<string, string>();
  const campaigns = await db.selectFrom("campaigns").select(["uid", "status"]).where("_deleted_at", "is", null).execute();
  for (const row of campaigns) held.set(`campaign ${row.uid}`, String(row.status));
  const contacts = await db.selectFrom("contacts").select(["id", "bounced", "unsubscribed"]).execute();
  for (const row of contacts) held.set(`contact ${row.id}`, `${row.bounced}|${row.unsubscribed}`);
  const { rows: schedules } = await sql<{ id: number; value: string }>`
    SELECT id, concat_ws('|', status, coalesce(to_char(sent_on AT TIME ZONE 'UTC', ${instant}), 'null'), reply_received::text, email_opened::text, email_open_count::text) AS value
      FROM schedules WHERE _deleted_at IS NULL`.execute(db);
  for (const row of schedules) held.set(`schedule ${row.id}`, row.value);
  const wrong = [...expected].filter(([key, value]) => held.has(key) && held.get(key) !== value).map(([key, value]) => `${key}: upstream ${value}, warehouse ${held.get(key)}`);
  return wrong.length === 0 ? [] : [{ what: "values", missing: wrong.slice(0, 5), extra: [] }];
}

export async function runsLeftRunning(db: Kysely<Database>): Promise<number> {
  const row = await db.selectFrom("sync_runs").select(sql<number>`count(*)::int`.as("n")).where("outcome", "=", "running").executeTakeFirstOrThrow();
  return row.n;
}

/** Jobs active or waiting for longer than `olderThanMs`: a job nothing will move again. */
export async function stuckJobs(redisUrl: string, prefix: string, olderThanMs: number): Promise<string[]> {
  const redis = new Redis(redisUrl);
  const queues = openQueues(redis, { prefix });
  const now = Date.now();
  try {
    const stuck: string[] = [];
    for (const queue of queues.all()) {
      for (const job of await queue.getJobs(["active", "waiting", "prioritized"])) {
        const since = job.processedOn ?? job.timestamp;
        if (now - since > olderThanMs) stuck.push(`${queue.name} ${job.name} ${JSON.stringify(job.data)}`);
      }
    }
    return stuck;
  } finally {
    await queues.close();
    redis.disconnect();
  }
}
