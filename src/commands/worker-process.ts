import { once } from "node:events";
import type { Config } from "../config.ts";
import { isConnectionError, isOutageNoise, watchDependencies, type DependencyWatch, type WorkerDependencies } from "../dependencies.ts";
import { createMetrics } from "../http/metrics.ts";
import { HttpListener } from "../http/listener.ts";
import { startHttpServer } from "../http/server.ts";
import { combineHooks, trackUpstreamAnswers } from "../http/status-page/last-answer.ts";
import { logConsoleThrough, type Logger } from "../logger.ts";
import { closeRedis, connectRedis, whenReady } from "../queue/connection.ts";
import { RedisRequestLimiter } from "../queue/rate-budget.ts";
import { startWorkerService, type WorkerService, type WorkerTuning } from "../queue/worker.ts";
import { loggerFor, openRuntime, type Runtime } from "../runtime.ts";
import { runCampaignSync, runDiscovery } from "../sync/runs.ts";
import { closeAbandonedRuns } from "../sync/run-ledger.ts";
import { pruneRunLog } from "../sync/retention.ts";
import { verify } from "../sync/verify.ts";
import { reachPostgres } from "../warehouse/connect.ts";
import { requireMigrated } from "../warehouse/migrate.ts";

const SHUTDOWN_TIMEOUT_MS = 30_000;
const SIGNALS = ["SIGTERM", "SIGINT"] as const;

/** The worker's process: starts it, waits for SIGTERM or SIGINT, drains, and exits. */
export async function runWorker(config: Config, { databaseUrl, tuning }: { databaseUrl: string; tuning: Partial<WorkerTuning> }): Promise<void> {
  // A line that only repeats an outage one of the watches reports goes to that watch instead of the output.
  const watches: DependencyWatch[] = [];
  const logger = loggerFor(config, { quiet: (fields) => isOutageNoise(watches, fields) });
  logConsoleThrough(logger);
  const dependencies = watchDependencies({ redis: config.redis.url, postgres: databaseUrl }, logger);
  watches.push(dependencies.redis, dependencies.postgres);
  // Listening before anything starts: a signal during start-up (even while waiting for a dependency) drains at once.
  const stopRequested = firstSignal();
  const stop = new AbortController();
  void stopRequested.then((signal) => stop.abort(signal));
  let worker: RunningWorker;
  try {
    worker = await startWorker(config, { logger, tuning, dependencies, signal: stop.signal });
  } catch (error) {
    if (!stop.signal.aborted) throw error;
    logger.info({ signal: stop.signal.reason }, "stopped while starting");
    process.exit(0);
  }
  const signal = await stopRequested;
  logger.info({ signal }, "draining: no new jobs; runs in flight stop after their current page");
  forceExitAfter(SHUTDOWN_TIMEOUT_MS, logger);
  await worker.close();
  logger.info("drained");
  process.exit(0);
}

export interface RunningWorker {
  /** Where the status page (/), /livez, /readyz, /metrics and /admin/queues answer. */
  url: string;
  service: WorkerService;
  close(): Promise<void>;
}

export interface StartWorkerOptions {
  logger: Logger;
  tuning?: Partial<WorkerTuning>;
  /** The watches the logger hands outage lines to; made here, without that hook, when not given. */
  dependencies?: WorkerDependencies;
  /** Aborts start-up, also while it waits for a dependency. */
  signal?: AbortSignal;
}

/**
 * Everything `coldsync worker` runs, wired together; close() drains and
 * releases every connection. The HTTP port opens first and answers the probes
 * (alive, not ready) while the worker waits, with backoff, for PostgreSQL and
 * then Redis: a worker started during an outage comes up by itself once they
 * are back.
 */
export async function startWorker(config: Config, options: StartWorkerOptions): Promise<RunningWorker> {
  const { logger, signal } = options;
  const databaseUrl = config.warehouse.databaseUrl;
  if (databaseUrl === undefined) throw new Error("the worker needs DATABASE_URL");
  const dependencies = options.dependencies ?? watchDependencies({ redis: config.redis.url, postgres: databaseUrl }, logger);
  let waitingFor = "PostgreSQL";
  const listener = await HttpListener.open(config.http.host, config.http.port, () => waitingFor);
  // One fail-fast connection serves the rate budget, the queues, the run leases and the readiness probe.
  const redis = connectRedis(config.redis.url, "client", logger, dependencies.redis);
  // Whatever has opened so far, newest first: a start that fails half-way closes exactly that much.
  const closeListener = () => listener.close();
  const opened: (() => Promise<void>)[] = [() => closeRedis(redis), closeListener];
  // Once: a second call (a signal during the drain, a caller's clean-up) waits for the first.
  let closing: Promise<void> | undefined;
  const closeOpened = () =>
    (closing ??= (async () => {
      for (const close of opened) await close();
    })());
  try {
    await dependencies.postgres.waitUntilUp(() => reachPostgres(databaseUrl), signal);
    waitingFor = "Redis";
    if (redis.status !== "ready") logger.info({ dependency: "Redis" }, "waiting for Redis before starting");
    await whenReady(redis, signal);
    waitingFor = "start-up";

    const metrics = createMetrics(logger);
    // The status page shows the last upstream answer this process received.
    const upstreamAnswers = trackUpstreamAnswers();
    const limiter = new RedisRequestLimiter(redis, {
      prefix: config.redis.prefix,
      account: config.account,
      requestsPerSecond: config.api.rateLimit,
      logger,
    });
    const openWarehouse = () =>
      openRuntime(config, {
        logger,
        createSchema: false,
        limiter,
        hooks: combineHooks(metrics.clientHooks, upstreamAnswers.hooks),
        onConnectionError: (error) => dependencies.postgres.failed(error),
      });
    let runtime: Runtime | undefined;
    while (runtime === undefined) {
      const opening = await openWarehouse();
      try {
        await prepareWarehouse(opening, config, logger);
        runtime = opening;
      } catch (error) {
        await opening.close();
        // A connection PostgreSQL dropped during start-up (a restart, a terminated backend) is an outage like any
        // other: the worker waits for PostgreSQL again instead of exiting.
        if (!isConnectionError(error)) throw error;
        dependencies.postgres.failed(error);
        await dependencies.postgres.waitUntilUp(() => reachPostgres(databaseUrl), signal);
      }
    }
    opened.unshift(() => runtime.close());

    const context = (signal: AbortSignal) => runtime.syncContext({ trigger: "worker", signal, observer: metrics.syncObserver });
    const service = await startWorkerService({
      config,
      redis,
      db: runtime.warehouse.db,
      sync: {
        discover: (signal) => runDiscovery(context(signal)),
        syncCampaign: (campaignUid, rhythm, signal) => runCampaignSync(context(signal), campaignUid, rhythm),
        verify: async (signal) => (await verify(context(signal))).problems,
        prune: async (signal) => {
          const retentionMs = config.runRetentionMs;
          if (retentionMs === undefined) return null;
          return pruneRunLog(runtime.warehouse.db, config.account, new Date(Date.now() - retentionMs), { signal });
        },
      },
      logger,
      metrics,
      redisWatch: dependencies.redis,
      ...(options.tuning ? { tuning: options.tuning } : {}),
    });
    opened.unshift(() => service.close());
    const http = await startHttpServer({
      host: config.http.host,
      port: config.http.port,
      listener,
      token: config.http.token,
      registry: metrics.registry,
      queues: service.queues.all(),
      health: { redis, redisPrefix: config.redis.prefix, db: runtime.warehouse.db },
      logger,
      statusPage: {
        mode: "worker",
        account: config.account,
        db: runtime.warehouse.db,
        cadence: config.worker,
        rateLimitPerSecond: config.api.rateLimit,
        upstream: upstreamAnswers,
        fleet: { redis, queues: service.queues.all(), prefix: config.redis.prefix, account: config.account },
      },
    });
    // The HTTP server closes first, and the listener with it.
    opened.splice(opened.indexOf(closeListener), 1);
    opened.unshift(() => http.close());
    logger.info({ url: http.url, auth: config.http.token !== undefined }, "serving the status page (/), /livez, /readyz, /metrics and /admin/queues");
    return { url: http.url, service, close: closeOpened };
  } catch (error) {
    await closeOpened();
    throw error;
  }
}

/** Refuses a warehouse that lacks migrations, and closes the runs of a worker that was killed as aborted (under any account). */
async function prepareWarehouse(runtime: Runtime, config: Config, logger: Logger): Promise<void> {
  await requireMigrated(runtime.warehouse);
  // Before any run opens: the status page and /metrics count a dead worker's runs as running until then.
  const abandoned = await closeAbandonedRuns(runtime.warehouse.db, runtime.warehouse.locks, null);
  if (abandoned > 0) logger.info({ runs: abandoned }, "closed runs whose worker is gone as aborted");
}

async function firstSignal(): Promise<NodeJS.Signals> {
  const controller = new AbortController();
  const received = await Promise.race(SIGNALS.map((name) => once(process, name, { signal: controller.signal }).then(() => name)));
  controller.abort();
  return received;
}

/** A second signal, or a drain past the deadline, ends the process without waiting. */
function forceExitAfter(timeoutMs: number, logger: Logger): void {
  const force = (reason: string) => {
    logger.error(reason);
    process.exit(1);
  };
  setTimeout(() => force(`drain took longer than ${timeoutMs / 1000} s; exiting without waiting`), timeoutMs).unref();
  for (const name of SIGNALS) process.once(name, () => force(`${name} during drain; exiting without waiting`));
}
