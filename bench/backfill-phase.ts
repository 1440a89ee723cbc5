import { createReadStream, createWriteStream } from "node:fs";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { createLogger } from "../src/logger.ts";
import { inTransaction, rowsOf, writeRows } from "../src/sync/page-writer.ts";
import { runFullSync } from "../src/sync/runs.ts";
import type { StreamDefinition, StreamScope } from "../src/sync/stream.ts";
import { ACCOUNT_STREAMS, CAMPAIGN_STREAMS } from "../src/sync/streams/index.ts";
import { UpstreamClient } from "../src/upstream/client.ts";
import { openWarehouse } from "../src/warehouse/connect.ts";
import { migrateToLatest } from "../src/warehouse/migrate.ts";

/**
 * One phase of bench/backfill, run in a child process of its own so that its
 * peak RSS is its own. Prints one JSON line: { seconds, cpuSeconds, records, requests, peakRssMb }.
 *
 *   fetch <url> <key> <pagesFile>       walk every page and parse it, write nothing (pages saved for the next phase)
 *   write <databaseUrl> <schema> <file>  upsert the rows of the saved pages, fetch nothing
 *   sync  <url> <key> <databaseUrl> <schema>   the real thing: runFullSync
 */

const [phase, ...args] = process.argv.slice(2);
const CLIENT = { requestsPerSecond: 100_000, concurrency: 8, maxRetries: 6 } as const;
const ALL_STREAMS = new Map([...ACCOUNT_STREAMS, ...CAMPAIGN_STREAMS].map((stream) => [stream.name, stream]));

interface SavedPage {
  stream: string;
  campaignUid: string | null;
  records: unknown[];
}

async function fetchAll(url: string, key: string, pagesFile: string) {
  const client = new UpstreamClient({ baseUrl: url, apiKey: key, ...CLIENT });
  const out = createWriteStream(pagesFile);
  let records = 0;
  const save = async (page: SavedPage) => {
    records += page.records.length;
    if (!out.write(`${JSON.stringify(page)}\n`)) await once(out, "drain");
  };
  await save({ stream: "workspaces", campaignUid: null, records: (await client.listWorkspaces()).records });
  for (const resource of ["domains", "contact_lists"] as const) {
    for await (const page of client.pages(resource, {})) await save({ stream: resource, campaignUid: null, records: page.records });
  }
  const campaignUids: string[] = [];
  for await (const page of client.pages("campaigns", {})) {
    campaignUids.push(...page.records.map((record) => record.uid));
    await save({ stream: "campaigns", campaignUid: null, records: page.records });
  }
  await Promise.all(
    [0, 1, 2].map(async (lane) => {
      for (let index = lane; index < campaignUids.length; index += 3) {
        const campaignUid = campaignUids[index] as string;
        await save({ stream: "campaign_detail", campaignUid, records: [await client.getCampaign(campaignUid)] });
        const sequenceIds = new Set<number>();
        for await (const page of client.pages("leads", { campaignUid })) {
          for (const lead of page.records) for (const schedule of lead.schedules) sequenceIds.add(schedule.email_data.id);
          await save({ stream: "leads", campaignUid, records: page.records });
        }
        await save({ stream: "replies", campaignUid, records: (await client.listReplies(campaignUid)).records });
        for (const resource of ["link_clicks", "email_opens"] as const) {
          for await (const page of client.pages(resource, { campaignUid })) await save({ stream: resource, campaignUid, records: page.records });
        }
        const sequences = await Promise.all([...sequenceIds].map((id) => client.getEmailSequence(id)));
        await save({ stream: "email_sequences", campaignUid, records: sequences });
      }
    }),
  );
  out.end();
  await once(out, "finish");
  const requests = client.stats.requests;
  await client.close();
  return { records, requests };
}

async function writeAll(databaseUrl: string, schema: string, pagesFile: string) {
  const warehouse = await openWarehouse({ databaseUrl, dataDir: ".coldsync", schema });
  await migrateToLatest(warehouse);
  let records = 0;
  const lines = createInterface({ input: createReadStream(pagesFile), crlfDelay: Infinity });
  for await (const line of lines) {
    const page = JSON.parse(line) as SavedPage;
    const stream = ALL_STREAMS.get(page.stream as StreamDefinition["name"]) as StreamDefinition;
    const scope: StreamScope = { account: "bench", campaignUid: page.campaignUid };
    const batch = rowsOf(stream, page.records, scope);
    await inTransaction(warehouse.db, (trx) => writeRows(trx, batch, new Date()));
    records += page.records.length;
  }
  await warehouse.destroy();
  return { records, requests: 0 };
}

async function syncAll(url: string, key: string, databaseUrl: string, schema: string) {
  const client = new UpstreamClient({ baseUrl: url, apiKey: key, ...CLIENT });
  const warehouse = await openWarehouse({ databaseUrl, dataDir: ".coldsync", schema });
  await migrateToLatest(warehouse);
  const summary = await runFullSync({ client, db: warehouse.db, account: "bench", logger: createLogger({ level: "warn" }), trigger: "cli" });
  await client.close();
  await warehouse.destroy();
  if (summary.outcome !== "succeeded") throw new Error(`sync ${summary.outcome}: ${summary.failures.map((failure) => failure.error.message).join("; ")}`);
  const records = Object.values(summary.streams).reduce((sum, totals) => sum + totals.fetched, 0);
  return { records, requests: summary.requests };
}

const startedAt = performance.now();
const result =
  phase === "fetch"
    ? await fetchAll(args[0] as string, args[1] as string, args[2] as string)
    : phase === "write"
      ? await writeAll(args[0] as string, args[1] as string, args[2] as string)
      : phase === "sync"
        ? await syncAll(args[0] as string, args[1] as string, args[2] as string, args[3] as string)
        : (() => {
            throw new Error(`unknown phase ${String(phase)}`);
          })();
const seconds = (performance.now() - startedAt) / 1000;
const usage = process.resourceUsage();
const cpuSeconds = (usage.userCPUTime + usage.systemCPUTime) / 1e6;
console.log(JSON.stringify({ ...result, seconds, cpuSeconds, peakRssMb: usage.maxRSS / 1024 }));
