import type { Command } from "commander";
import { z } from "zod";
import { ConfigError, configSchema, duration, loadConfig, type Config } from "../config.ts";
import type { WorkerTuning } from "../queue/worker.ts";
import { flag, readFlagsAndConfig, withoutOverridden } from "./flags.ts";

/**
 * `coldsync worker`: the production job. It expects `coldsync migrate` to
 * have run (a worker that migrated on start would race its replicas and
 * surprise whoever manages the schema), syncs on the discovery schedule until
 * SIGTERM or SIGINT, then drains: no new jobs, the runs in flight stop after
 * the page they are writing, and the process exits 0. A drain that takes
 * longer than SHUTDOWN_TIMEOUT_MS, or a second signal, ends it with exit 1.
 */

interface WorkerFlags {
  concurrency?: string;
  port?: string;
  stallTimeout: string;
}

/** The flags that override a setting are read by that setting's own rule. */
const workerFlags = z.object({
  "--concurrency": flag(configSchema.shape.COLDSYNC_CONCURRENCY).optional(),
  "--port": flag(configSchema.shape.COLDSYNC_HTTP_PORT).optional(),
  "--stall-timeout": flag(duration),
});

type ReadFlags = z.output<typeof workerFlags>;

function withFlags(config: Config, flags: ReadFlags): Config {
  return {
    ...config,
    worker: { ...config.worker, concurrency: flags["--concurrency"] ?? config.worker.concurrency },
    http: { ...config.http, port: flags["--port"] ?? config.http.port },
  };
}

/** One knob for BullMQ's lock and stalled-check periods and the run lease: how soon a dead worker's job moves on. */
function stallTuning(stallTimeoutMs: number): Partial<WorkerTuning> {
  return { lockDurationMs: stallTimeoutMs, stalledIntervalMs: stallTimeoutMs, leaseTtlMs: stallTimeoutMs };
}

export function register(program: Command): void {
  program
    .command("worker")
    .description("BullMQ workers and the discovery scheduler; the status page, /livez, /readyz, /metrics and /admin/queues over HTTP")
    .option("--concurrency <n>", "campaign-sync jobs run at once by this process (overrides COLDSYNC_CONCURRENCY)")
    .option("--port <n>", "port for the status page, health, metrics and the queue dashboard (overrides COLDSYNC_HTTP_PORT)")
    .option("--stall-timeout <duration>", "how long the job of a worker that died waits before another worker resumes it", "30s")
    .action(async (given: WorkerFlags) => {
      const { flags, config } = readFlagsAndConfig(
        workerFlags,
        { "--concurrency": given.concurrency, "--port": given.port, "--stall-timeout": given.stallTimeout },
        () => loadConfig(withoutOverridden(process.env, { COLDSYNC_CONCURRENCY: given.concurrency, COLDSYNC_HTTP_PORT: given.port }), ["apiKey", "databaseUrl"]),
      );
      const databaseUrl = config.warehouse.databaseUrl;
      if (databaseUrl === undefined) throw new ConfigError(["DATABASE_URL: required"]);
      // Loaded only when the command runs: `worker --help` needs neither the queues, the database nor the web server.
      const { runWorker } = await import("./worker-process.ts");
      await runWorker(withFlags(config, flags), { databaseUrl, tuning: stallTuning(flags["--stall-timeout"]) });
    });
}
