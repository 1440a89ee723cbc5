import { setTimeout as sleep } from "node:timers/promises";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { SeedScale } from "../../src/emulator/options.ts";
import { Random } from "../../src/emulator/random.ts";
import { startEmulator } from "../../src/emulator/server.ts";
import { openWarehouse } from "../../src/warehouse/connect.ts";
import { migrateToLatest } from "../../src/warehouse/migrate.ts";
import { createScratchDatabase, withAdmin } from "../scratch-database.ts";
import { keyDifferences, runsLeftRunning, stuckJobs, valueDifferences, type Difference } from "./check.ts";
import { WorkerFleet } from "./fleet.ts";
import { OwnRedis } from "./redis-server.ts";

/**
 * The chaos run (README, "Failure modes"): a fleet of workers syncs an
 * emulator with hostile faults into a warehouse database and a Redis of its
 * own, while workers are SIGKILLed, Redis is stopped and restarted (once with
 * its keys, once without), and PostgreSQL drops every connection of the
 * database (and, when allowed, restarts). Then the workers finish, the
 * emulator's time moves a day, the workers catch up, and the warehouse must
 * equal the upstream: every key and every value that changes, no run left
 * `running`, no job stuck, nothing printed outside the JSON log stream.
 * Seeded: the same seed draws the same faults in the same order.
 */

export interface ChaosOptions {
  /** An administrator URL of the PostgreSQL server; the run creates (and drops) a database of its own there. */
  databaseUrl: string;
  seed: number;
  scale: SeedScale;
  workers: number;
  kills: number;
  /** Redis restarts; the first keeps its keys, every other drops them all. */
  redisRestarts: number;
  /** Times every connection of the warehouse database is terminated. */
  postgresTerminations: number;
  /** Also restart the PostgreSQL server (pg_ctlcluster); only with the user's leave. */
  restartPostgres: boolean;
  /** Milliseconds between two faults. */
  spacingMs: number;
  /** How long the fleet may take to catch up before the run gives up. */
  settleTimeoutMs: number;
  log?: (line: string) => void;
}

export interface ChaosReport {
  faults: Record<string, number>;
  differences: Difference[];
  runsLeftRunning: number;
  stuckJobs: string[];
  strayLines: string[];
  /** The fleet's JSON log lines per pino level: outages must be logged, not shouted. */
  linesByLevel: Record<string, number>;
  /** The first error lines (message and error), when there were any. */
  errorLines: string[];
  exitCodes: (number | null)[];
  ok: boolean;
}

type Fault = "kill" | "redis-keep" | "redis-drop" | "postgres-terminate" | "postgres-restart";

const API_KEY = "chaos-key";
const run = promisify(execFile);

function faultPlan(options: ChaosOptions, random: Random): Fault[] {
  const plan: Fault[] = [
    ...Array.from({ length: options.kills }, () => "kill" as const),
    ...Array.from({ length: options.redisRestarts }, (_, index) => (index === 0 ? ("redis-keep" as const) : ("redis-drop" as const))),
    ...Array.from({ length: options.postgresTerminations }, () => "postgres-terminate" as const),
    ...(options.restartPostgres ? ["postgres-restart" as const] : []),
  ];
  // Fisher-Yates with the run's own seeded stream.
  for (let index = plan.length - 1; index > 0; index -= 1) {
    const other = random.int(0, index);
    [plan[index], plan[other]] = [plan[other] as Fault, plan[index] as Fault];
  }
  return plan;
}

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const log = options.log ?? (() => undefined);
  const random = new Random(options.seed);
  const database = `coldsync_chaos_${options.seed}_${Date.now().toString(36)}`;
  const faults: Record<string, number> = {};
  const count = (fault: string) => (faults[fault] = (faults[fault] ?? 0) + 1);

  const emulator = await startEmulator({ seed: options.seed, scale: options.scale, apiKeys: [API_KEY], faults: "hostile", slowMs: 200 });
  const scratch = await createScratchDatabase(options.databaseUrl, database);
  const warehouseUrl = scratch.url;
  const warehouse = await openWarehouse({ databaseUrl: warehouseUrl, dataDir: ".coldsync", schema: "coldsync" });
  await migrateToLatest(warehouse);
  const redis = await OwnRedis.start();
  const prefix = "chaos";
  const fleet = new WorkerFleet(options.workers, {
    COLDSYNC_API_URL: emulator.url,
    COLDSYNC_API_KEY: API_KEY,
    COLDSYNC_ACCOUNT: "chaos",
    DATABASE_URL: warehouseUrl,
    REDIS_URL: redis.url,
    COLDSYNC_QUEUE_PREFIX: prefix,
    COLDSYNC_RATE_LIMIT: "400",
    COLDSYNC_HTTP_CONCURRENCY: "8",
    COLDSYNC_CONCURRENCY: "2",
    COLDSYNC_DISCOVER_EVERY: "10s",
    COLDSYNC_EVENTS_EVERY: "5s",
    COLDSYNC_ACTIVE_EVERY: "20s",
    COLDSYNC_IDLE_EVERY: "30s",
    COLDSYNC_TERMINAL_EVERY: "30s",
    COLDSYNC_HTTP_HOST: "127.0.0.1",
    COLDSYNC_HTTP_PORT: "0",
    COLDSYNC_LOG_LEVEL: "info",
  });
  let report: ChaosReport | undefined;
  try {
    fleet.startAll();
    for (const fault of faultPlan(options, random)) {
      await sleep(options.spacingMs);
      log(`fault: ${fault}`);
      count(fault);
      switch (fault) {
        case "kill":
          await fleet.killAndRestart(random.int(0, fleet.size - 1), 1_000);
          break;
        case "redis-keep":
        case "redis-drop":
          await redis.stop(fault === "redis-keep");
          await sleep(2_000);
          await redis.start();
          break;
        case "postgres-terminate":
          await withAdmin(options.databaseUrl, (client) =>
            client.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [database]),
          );
          break;
        case "postgres-restart":
          await run("bash", ["-c", 'pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main restart']);
          break;
      }
    }
    // The faults are over: the upstream holds still, the fleet finishes, a day passes upstream, the fleet catches up.
    emulator.settings.faults = "none";
    log("settling");
    await settle(() => keyDifferences(warehouse.db, emulator.truth(API_KEY)), Date.now() + options.settleTimeoutMs, 2_000);
    emulator.advance(24 * 3600);
    log("a simulated day later: catching up");
    const deadline = Date.now() + options.settleTimeoutMs;
    const differences = await settle(() => keyDifferences(warehouse.db, emulator.truth(API_KEY)), deadline, 2_000);
    // Keys first, then the values that change: the events rhythm and the next leads walk bring them.
    if (differences.length === 0) differences.push(...(await settle(() => valueDifferences(warehouse.db, emulator.url, API_KEY), deadline, 5_000)));
    const stuck = await stuckJobs(redis.url, prefix, 60_000);
    const exitCodes = await fleet.stopAll();
    const left = await runsLeftRunning(warehouse.db);
    const strays = fleet.strayLines();
    report = {
      faults: { ...faults, "worker restarts": fleet.restarts },
      differences,
      runsLeftRunning: left,
      stuckJobs: stuck,
      strayLines: strays.slice(0, 5),
      linesByLevel: fleet.linesByLevel(),
      errorLines: fleet.linesAtOrAbove(50).slice(0, 5),
      exitCodes,
      ok: differences.length === 0 && left === 0 && stuck.length === 0 && strays.length === 0 && exitCodes.every((code) => code === 0),
    };
    return report;
  } finally {
    await fleet.stopAll();
    await redis.destroy();
    await warehouse.destroy();
    await emulator.close();
    if (report?.ok !== false) await scratch.drop();
    else log(`kept the warehouse database ${database} for inspection`);
  }
}

/** Waits until `differences` finds none (read anew each time, every `everyMs`), or the deadline; the differences left. */
async function settle(differences: () => Promise<Difference[]>, deadline: number, everyMs: number): Promise<Difference[]> {
  for (;;) {
    const found = await differences().catch((error: unknown) => [{ what: `warehouse unreadable: ${String(error)}`, missing: [], extra: [] }]);
    if (found.length === 0 || Date.now() > deadline) return found;
    await sleep(everyMs);
  }
}

/** A table of the faults injected and of the result, for the terminal. */
export function reportText(report: ChaosReport): string {
  const lines = ["fault                      count", ...Object.entries(report.faults).map(([fault, times]) => `${fault.padEnd(26)} ${times}`), ""];
  lines.push(`differences with the upstream: ${report.differences.length === 0 ? "none" : ""}`);
  for (const difference of report.differences) lines.push(`  ${difference.what}: missing ${difference.missing.join(", ") || "-"}; extra ${difference.extra.join(", ") || "-"}`);
  lines.push(`runs left running: ${report.runsLeftRunning}`);
  lines.push(`jobs stuck: ${report.stuckJobs.length}${report.stuckJobs.length > 0 ? ` (${report.stuckJobs.slice(0, 3).join("; ")})` : ""}`);
  lines.push(`lines outside the JSON log stream: ${report.strayLines.length}${report.strayLines.length > 0 ? ` (first: ${report.strayLines[0]})` : ""}`);
  const level = (number: number) => report.linesByLevel[String(number)] ?? 0;
  lines.push(`log lines: ${level(30)} info, ${level(40)} warn, ${level(50)} error, ${level(60)} fatal`);
  for (const line of report.errorLines) lines.push(`  error: ${line.slice(0, 200)}`);
  lines.push(`worker exit codes on SIGTERM: ${report.exitCodes.join(", ")}`);
  lines.push(report.ok ? "RESULT: the warehouse equals the upstream" : "RESULT: FAILED");
  return lines.join("\n");
}
