import { once } from "node:events";
import type { Command } from "commander";
import { ConfigError, duration, loadConfig, type Config } from "../config.ts";
import { createMetrics } from "../http/metrics.ts";
import { startHttpServer } from "../http/server.ts";
import type { Logger } from "../logger.ts";
import { closeRedis, connectRedis } from "../queue/connection.ts";
import { RedisRequestLimiter } from "../queue/rate-budget.ts";
import { startWorkerService, type WorkerService, type WorkerTuning } from "../queue/worker.ts";
import { loggerFor, openRuntime } from "../runtime.ts";
import { runCampaignSync, runDiscovery } from "../sync/runs.ts";
import { pendingMigrations } from "../warehouse/migrate.ts";

/**
 * `coldsync worker`: the production job. It expects `coldsync migrate` to
 * have run (a worker that migrated on start would race its replicas and
 * surprise whoever manages the schema), syncs on the discovery schedule until
 * SIGTERM or SIGINT, then drains: no new jobs, the runs in flight stop after
 * the page they are writing, and the process exits 0. A drain that takes
 * longer than SHUTDOWN_TIMEOUT_MS, or a second signal, ends it with exit 1.
 */

const SHUTDOWN_TIMEOUT_MS = 30_000;
const SIGNALS = ["SIGTERM", "SIGINT"] as const;

interface WorkerFlags {
  concurrency?: string;
  port?: string;
  stallTimeout: string;
}

/** One knob for BullMQ's lock and stalled-check periods and the run lease: how soon a dead worker's job moves on. */
function stallTuning(flag: string): Partial<WorkerTuning> {
  const parsed = duration.safeParse(flag);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((issue) => `--stall-timeout: ${issue.message}`));
  return { lockDurationMs: parsed.data, stalledIntervalMs: parsed.data, leaseTtlMs: parsed.data };
}

export function register(program: Command): void {
  program
    .command("worker")
    .description("BullMQ workers and the discovery scheduler; /healthz, /metrics and /admin/queues over HTTP")
    .option("--concurrency <n>", "campaign-sync jobs run at once by this process (overrides COLDSYNC_CONCURRENCY)")
    .option("--port <n>", "port for health, metrics and the queue dashboard (overrides COLDSYNC_HTTP_PORT)")
    .option("--stall-timeout <duration>", "how long the job of a worker that died waits before another worker resumes it", "30s")
    .action(async (flags: WorkerFlags) => {
      // Flags go through the same validation as the variables they override.
      const config = loadConfig(
        {
          ...process.env,
          ...(flags.concurrency === undefined ? {} : { COLDSYNC_CONCURRENCY: flags.concurrency }),
          ...(flags.port === undefined ? {} : { COLDSYNC_HTTP_PORT: flags.port }),
        },
        ["apiKey", "databaseUrl"],
      );
      const tuning = stallTuning(flags.stallTimeout);
      const logger = loggerFor(config);
      // Listening before anything starts: a signal during start-up drains as soon as start-up is done.
      const stopRequested = firstSignal();
      const worker = await startWorker(config, { logger, tuning });
      const signal = await stopRequested;
      logger.info({ signal }, "draining: no new jobs; runs in flight stop after their current page");
      forceExitAfter(SHUTDOWN_TIMEOUT_MS, logger);
      await worker.close();
      logger.info("drained");
      process.exit(0);
    });
}

export interface RunningWorker {
  /** Where /healthz, /metrics and /admin/queues answer. */
  url: string;
  service: WorkerService;
  close(): Promise<void>;
}

/** Everything `coldsync worker` runs, wired together; close() drains and releases every connection. */
export async function startWorker(config: Config, options: { logger: Logger; tuning?: Partial<WorkerTuning> }): Promise<RunningWorker> {
  const { logger } = options;
  // One fail-fast connection serves the rate budget, the queues, the run leases and /healthz.
  const redis = connectRedis(config.redis.url, "client", logger);
  // Whatever has opened so far, newest first: a start that fails half-way closes exactly that much.
  const opened: (() => Promise<void>)[] = [() => closeRedis(redis)];
  const closeOpened = async () => {
    for (const close of opened) await close();
  };
  try {
    const metrics = createMetrics(logger);
    const limiter = new RedisRequestLimiter(redis, {
      prefix: config.redis.prefix,
      account: config.account,
      requestsPerSecond: config.api.rateLimit,
      logger,
    });
    const runtime = await openRuntime(config, { logger, limiter, hooks: metrics.clientHooks });
    opened.unshift(() => runtime.close());

    const pending = await pendingMigrations(runtime.warehouse);
    if (pending.length > 0) {
      throw new Error(
        `the warehouse schema "${config.warehouse.schema}" is missing ${pending.length} migration(s) (${pending.join(", ")}); run \`coldsync migrate\` first`,
      );
    }

    const context = (signal: AbortSignal) => runtime.syncContext({ trigger: "worker", signal, observer: metrics.syncObserver });
    const service = await startWorkerService({
      config,
      redis,
      db: runtime.warehouse.db,
      sync: {
        discover: (signal) => runDiscovery(context(signal)),
        syncCampaign: (campaignUid, signal) => runCampaignSync(context(signal), campaignUid),
      },
      logger,
      metrics,
      ...(options.tuning ? { tuning: options.tuning } : {}),
    });
    opened.unshift(() => service.close());
    const http = await startHttpServer({
      host: config.http.host,
      port: config.http.port,
      token: config.http.token,
      registry: metrics.registry,
      queues: service.queues.all(),
      health: { redis, db: runtime.warehouse.db },
      logger,
    });
    opened.unshift(() => http.close());
    logger.info({ url: http.url, auth: config.http.token !== undefined }, "serving /healthz, /metrics and /admin/queues");
    return { url: http.url, service, close: closeOpened };
  } catch (error) {
    await closeOpened();
    throw error;
  }
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
