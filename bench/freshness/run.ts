import { setTimeout as sleep } from "node:timers/promises";
import { OwnRedis } from "../chaos/redis-server.ts";
import { spawnEmulator, type EmulatorProcess } from "../emulator-process.ts";
import { createScratchDatabase, type ScratchDatabase } from "../../src/warehouse/scratch-database.ts";
import { EVENT_STREAMS, lagsOf, summarize, type EventStream, type StreamLag } from "./lag.ts";
import { measureNoChange, type NoChangeResult } from "./no-change.ts";
import { difference, perMinute, type RequestCounts } from "./requests.ts";
import { groundTruth, readClock, setClock, upstreamEvents } from "./upstream.ts";
import { backfillDone, eventsIntervals, formulaPerMinute, heldEvents, type FormulaRate } from "./warehouse.ts";
import { BenchWorker, type WorkerSpec } from "./workers.ts";

/**
 * bench/freshness (issue 12): the emulator's `busy` seed with its simulated
 * clock at wall-clock speed, and two workers at COLDSYNC_RATE_LIMIT=5 on two
 * accounts of it, in the same run: `tuned` as configured by default (events
 * every minute, leads every 15 minutes) and `baseline` as coldsync ran before
 * the rhythms (one job, every 15 minutes, all streams together). After both
 * backfills, `minutes` of wall clock are measured: the lag of every reply,
 * click and open that happened in them, and the requests each worker made.
 * Then the simulated clock is frozen and the tuned worker's no-change cycles
 * are counted against the README formula.
 */

export interface FreshnessOptions {
  /** An administrator URL of the PostgreSQL server; the run creates (and drops) a database of its own there. */
  databaseUrl: string;
  seed: number;
  minutes: number;
  /** Ticks of the events scheduler in the no-change window. */
  ticks: number;
  keepDatabase: boolean;
  log: (line: string) => void;
}

export interface WorkerFigures {
  name: string;
  settings: Record<string, string>;
  campaigns: number;
  backfillSeconds: number;
  lag: Record<EventStream, StreamLag>;
  /** The three streams together: one events cycle reads all three, so they share one lag distribution. */
  lagAll: StreamLag;
  requests: RequestCounts;
  perMinute: RequestCounts;
  formula: FormulaRate;
  /** Seconds between a campaign's consecutive events runs in the window (the cadence achieved). */
  eventsIntervals: number[];
  exitCode: number | null;
  errorLines: string[];
}

export interface FreshnessReport {
  seed: number;
  windowMs: number;
  simWindow: { from: string; to: string };
  offsetMs: number;
  /** How far real − simulated time moved between the start and the end of the window (0 when the wall clock kept pace). */
  offsetDriftMs: number;
  /** From the end of the window to the last look at the warehouses. */
  observedAfterMs: number;
  rateLimit: number;
  workers: WorkerFigures[];
  noChange: NoChangeResult;
}

const RATE_LIMIT = "5";
export const SPECS: readonly WorkerSpec[] = [
  { name: "tuned", apiKey: "freshness-tuned", settings: { COLDSYNC_RATE_LIMIT: RATE_LIMIT } },
  { name: "baseline", apiKey: "freshness-baseline", settings: { COLDSYNC_RATE_LIMIT: RATE_LIMIT, COLDSYNC_EVENTS_EVERY: "off", COLDSYNC_ACTIVE_EVERY: "15m" } },
];
const BACKFILL_TIMEOUT_MS = 15 * 60_000;
/** The page size the workers' client asks for (src/upstream/client.ts): pages(leads) in the formula. */
const PAGE_SIZE = 100;

export async function runFreshness(options: FreshnessOptions): Promise<FreshnessReport> {
  const { log } = options;
  const cleanup: (() => Promise<unknown>)[] = [];
  try {
    const emulator: EmulatorProcess = await spawnEmulator({ scale: "busy", seed: options.seed, apiKeys: SPECS.map((spec) => spec.apiKey), clock: "wall", admin: true });
    cleanup.unshift(() => emulator.stop());
    const start = await readClock(emulator.url);
    const offsetMs = start.realMs - start.simMs;
    const database: ScratchDatabase = await createScratchDatabase(options.databaseUrl, `coldsync_freshness_${options.seed}_${Date.now().toString(36)}`);
    cleanup.unshift(async () => (options.keepDatabase ? log(`kept the database ${database.name}`) : database.drop()));
    const redis = await OwnRedis.start();
    cleanup.unshift(() => redis.destroy());

    const place = { apiUrl: emulator.url, databaseUrl: database.url, redisUrl: redis.url };
    const workers: BenchWorker[] = [];
    for (const spec of SPECS) {
      const worker = await BenchWorker.start(spec, place);
      workers.push(worker);
      cleanup.unshift(() => worker.stop());
    }
    const startedAt = Date.now();
    log(`emulator at ${emulator.url}; workers ${workers.map((worker) => `${worker.name} ${worker.url}`).join(", ")}; backfilling`);

    const expected = await Promise.all(SPECS.map(async (spec) => (await groundTruth(emulator.url, spec.apiKey)).counts.campaigns));
    const backfillSeconds = await Promise.all(
      workers.map(async (worker, index) => {
        for (;;) {
          if (await backfillDone(worker.warehouse.db, worker.account, expected[index] as number)) return (Date.now() - startedAt) / 1000;
          if (Date.now() - startedAt > BACKFILL_TIMEOUT_MS) throw new Error(`the ${worker.name} worker's backfill did not finish in ${BACKFILL_TIMEOUT_MS / 60_000} minutes`);
          await sleep(1_000);
        }
      }),
    );
    log(`backfill done (${workers.map((worker, index) => `${worker.name} ${backfillSeconds[index]?.toFixed(0)} s`).join(", ")}); measuring ${options.minutes} min`);

    const before = await Promise.all(workers.map((worker) => worker.requests()));
    const windowStart = Date.now();
    for (let minute = 1; minute <= Math.ceil(options.minutes); minute += 1) {
      await sleep(Math.max(0, windowStart + Math.min(minute, options.minutes) * 60_000 - Date.now()));
      log(`measured ${Math.min(minute, options.minutes)} of ${options.minutes} min`);
    }
    const after = await Promise.all(workers.map((worker) => worker.requests()));
    const windowEnd = Date.now();
    const end = await readClock(emulator.url);
    await setClock(emulator.url, "manual");
    const frozenAt = Date.now();
    const frozen = await readClock(emulator.url);
    log("simulated clock frozen; counting the tuned worker's no-change cycles");

    const tuned = workers[0] as BenchWorker;
    const noChange = await measureNoChange(tuned, { url: emulator.url, apiKey: (SPECS[0] as WorkerSpec).apiKey }, frozenAt, options.ticks, log);

    const observedUntil = Date.now();
    const held = await Promise.all(workers.map((worker) => heldEvents(worker.warehouse.db)));
    const window = { fromSimMs: windowStart - offsetMs, toSimMs: frozen.simMs, offsetMs, observedUntilMs: observedUntil };
    const figures: WorkerFigures[] = [];
    for (const [index, worker] of workers.entries()) {
      const spec = SPECS[index] as WorkerSpec;
      const lags = lagsOf(await upstreamEvents(emulator.url, spec.apiKey), held[index] as Record<EventStream, Map<string, number>>, window);
      const requests = difference(before[index] as RequestCounts, after[index] as RequestCounts);
      figures.push({
        name: worker.name,
        settings: spec.settings,
        campaigns: expected[index] as number,
        backfillSeconds: backfillSeconds[index] as number,
        lag: Object.fromEntries(EVENT_STREAMS.map((stream) => [stream, summarize(lags[stream])])) as Record<EventStream, StreamLag>,
        lagAll: summarize(EVENT_STREAMS.flatMap((stream) => lags[stream])),
        requests,
        perMinute: perMinute(requests, windowEnd - windowStart),
        formula: await formulaPerMinute(worker.warehouse.db, worker.account, worker.config.worker, PAGE_SIZE),
        eventsIntervals: await eventsIntervals(worker.warehouse.db, worker.account, windowStart, windowEnd),
        exitCode: null,
        errorLines: [],
      });
    }
    for (const [index, worker] of workers.entries()) {
      const figure = figures[index] as WorkerFigures;
      figure.exitCode = await worker.stop();
      figure.errorLines = worker.errorLines().slice(0, 5);
    }
    return {
      seed: options.seed,
      windowMs: windowEnd - windowStart,
      simWindow: { from: new Date(window.fromSimMs).toISOString(), to: new Date(window.toSimMs).toISOString() },
      offsetMs,
      offsetDriftMs: end.realMs - end.simMs - offsetMs,
      observedAfterMs: observedUntil - windowEnd,
      rateLimit: Number(RATE_LIMIT),
      workers: figures,
      noChange,
    };
  } finally {
    for (const step of cleanup) await step().catch((error: unknown) => log(`cleanup: ${String(error)}`));
  }
}
