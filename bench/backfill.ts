import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import pg from "pg";
import { spawnEmulator } from "./emulator-process.ts";
import { printResults, type Target } from "./report.ts";

/**
 * bench/backfill: a full sync of the `medium` seed next to the two limits
 * measured in the same run (fetch-only and write-only), then the same sync of
 * `large` to show memory stays flat as data grows. Each phase runs in a child
 * process so that peak RSS is that phase's alone.
 */

const run = promisify(execFile);
/** `npm run bench` runs the compiled benchmark, so each phase measures compiled JavaScript, as production runs it. */
const COMPILED = import.meta.url.endsWith(".js");
const PHASE = fileURLToPath(new URL(COMPILED ? "./backfill-phase.js" : "./backfill-phase.ts", import.meta.url));
const PHASE_RUNTIME = COMPILED ? [] : ["--import", "tsx"];
const KEY = "bench";

interface PhaseResult {
  seconds: number;
  /** CPU time of the measured process itself (not the emulator's, nor PostgreSQL's). */
  cpuSeconds: number;
  records: number;
  requests: number;
  peakRssMb: number;
}

async function phase(...args: string[]): Promise<PhaseResult> {
  const { stdout } = await run(process.execPath, [...PHASE_RUNTIME, PHASE, ...args], { maxBuffer: 1 << 20, env: process.env });
  return JSON.parse(stdout.trim().split("\n").at(-1) as string) as PhaseResult;
}

async function freshSchemas(databaseUrl: string, schemas: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}

async function measureScale(databaseUrl: string, scale: "medium" | "large", withLimits: boolean) {
  const emulator = await spawnEmulator({ scale, seed: 1, apiKey: KEY });
  const scratch = await mkdtemp(join(tmpdir(), "coldsync-bench-"));
  try {
    const schemas = [`bench_${scale}_write`, `bench_${scale}_sync`];
    await freshSchemas(databaseUrl, schemas);
    const pagesFile = join(scratch, "pages.jsonl");
    const fetchOnly = withLimits ? await phase("fetch", emulator.url, KEY, pagesFile) : undefined;
    const writeOnly = withLimits ? await phase("write", databaseUrl, schemas[0] as string, pagesFile) : undefined;
    const sync = await phase("sync", emulator.url, KEY, databaseUrl, schemas[1] as string);
    await freshSchemas(databaseUrl, schemas);
    return { fetchOnly, writeOnly, sync };
  } finally {
    await rm(scratch, { recursive: true, force: true });
    await emulator.stop();
  }
}

export async function runBackfillBench(): Promise<Target[]> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error("bench/backfill needs DATABASE_URL (a PostgreSQL it may create scratch schemas in)");
  const medium = await measureScale(databaseUrl, "medium", true);
  const large = await measureScale(databaseUrl, "large", false);
  const fetchOnly = medium.fetchOnly as PhaseResult;
  const writeOnly = medium.writeOnly as PhaseResult;
  const slowerLimit = Math.max(fetchOnly.seconds, writeOnly.seconds);
  const rows = [
    ["fetch-only (medium)", fetchOnly],
    ["write-only (medium)", writeOnly],
    ["sync (medium)", medium.sync],
    ["sync (large)", large.sync],
  ] as const;
  console.log("\nbench/backfill");
  for (const [name, result] of rows) {
    console.log(
      `  ${name.padEnd(22)} ${result.seconds.toFixed(1).padStart(7)} s  (cpu ${result.cpuSeconds.toFixed(1).padStart(5)} s)  ${Math.round(result.records / result.seconds)
        .toString()
        .padStart(7)} records/s  ${String(result.requests).padStart(6)} requests  peak RSS ${result.peakRssMb.toFixed(0)} MB`,
    );
  }
  const targets: Target[] = [
    { name: "sync wall / slower limit (medium)", value: medium.sync.seconds / slowerLimit, limit: 1.2, lowerIsBetter: true },
    { name: "sync peak RSS MB (medium)", value: medium.sync.peakRssMb, limit: 250, lowerIsBetter: true },
    { name: "peak RSS large / medium", value: large.sync.peakRssMb / medium.sync.peakRssMb, limit: 1.1, lowerIsBetter: true },
  ];
  printResults(targets);
  return targets;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const targets = await runBackfillBench();
  process.exitCode = targets.every((target) => target.pass) ? 0 : 1;
}
