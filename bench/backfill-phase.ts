import { copyLimit } from "./backfill/copy-limit.ts";
import { fetchOnly } from "./backfill/fetch-only.ts";
import { naiveScript } from "./backfill/naive-script.ts";
import { passStartGate } from "./backfill/start-gate.ts";
import { prepareSyncProcess, syncPhase } from "./backfill/sync-phase.ts";
import { openWarehouse, type Warehouse } from "../src/warehouse/connect.ts";
import { migrateToLatest } from "../src/warehouse/migrate.ts";

/**
 * One phase of bench/backfill, in a child process of its own so that its peak
 * RSS is its own. Set-up (migrating the schema, preparing COPY's rows) is not
 * timed: the clock starts after the start gate (start-gate.ts). Prints one JSON line: { seconds, cpuSeconds, records, rows, requests, peakRssMb, stages? }.
 *
 *   fetch <url> <key> <answersFile>              walk and parse every page, write nothing (answers saved for the write phases)
 *   copy  <databaseUrl> <schema> <answersFile>   the database's limit: COPY the same rows
 *   naive <databaseUrl> <schema> <answersFile>   a per-row INSERT … ON CONFLICT script
 *   sync  <url> <key> <databaseUrl> <schema> [partial-ok]   the real thing: runFullSync
 */

const [phase, ...args] = process.argv.slice(2);
const CONCURRENCY = Number(process.env.COLDSYNC_HTTP_CONCURRENCY ?? "8");
const ACCOUNT = "bench";
const arg = (index: number) => args[index] as string;

async function migrated(databaseUrl: string, schema: string): Promise<Warehouse> {
  const warehouse = await openWarehouse({ databaseUrl, dataDir: ".coldsync", schema });
  await migrateToLatest(warehouse);
  return warehouse;
}

/** Runs `work`, timing it (wall and this process's CPU) unless it reports its own seconds. */
async function timed(work: () => Promise<Record<string, unknown>>): Promise<Record<string, unknown>> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const result = await work();
  const used = process.cpuUsage(cpu);
  return { seconds: (performance.now() - started) / 1000, cpuSeconds: (used.user + used.system) / 1e6, requests: 0, ...result };
}

async function run(): Promise<Record<string, unknown>> {
  switch (phase) {
    case "fetch":
      await passStartGate();
      return timed(() => fetchOnly(arg(0), arg(1), CONCURRENCY, arg(2)));
    case "copy": {
      const warehouse = await migrated(arg(0), arg(1));
      await warehouse.destroy();
      return timed(async () => {
        const loaded = await copyLimit(arg(0), arg(1), arg(2), ACCOUNT, passStartGate);
        // The process's CPU here is mostly preparing the rows; the load itself is the server's.
        return { rows: loaded.rows, seconds: loaded.seconds, cpuSeconds: null };
      });
    }
    case "naive": {
      const warehouse = await migrated(arg(0), arg(1));
      await warehouse.destroy();
      return timed(() => naiveScript(arg(0), arg(1), arg(2), ACCOUNT));
    }
    case "sync": {
      prepareSyncProcess();
      const warehouse = await migrated(arg(2), arg(3));
      try {
        return await timed(async () => ({ ...(await syncPhase(warehouse, arg(0), arg(1), CONCURRENCY, args[4] === "partial-ok")) }));
      } finally {
        await warehouse.destroy();
      }
    }
    default:
      throw new Error(`unknown phase ${String(phase)}`);
  }
}

const result = await run();
console.log(JSON.stringify({ ...result, peakRssMb: process.resourceUsage().maxRSS / 1024 }));
