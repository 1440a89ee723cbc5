import type { Command } from "commander";
import { ConfigError, duration, loadConfig } from "../config.ts";
import type { WorkerTuning } from "../queue/worker.ts";

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

/** One knob for BullMQ's lock and stalled-check periods and the run lease: how soon a dead worker's job moves on. */
function stallTuning(flag: string): Partial<WorkerTuning> {
  const parsed = duration.safeParse(flag);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((issue) => `--stall-timeout: ${issue.message}`));
  return { lockDurationMs: parsed.data, stalledIntervalMs: parsed.data, leaseTtlMs: parsed.data };
}

export function register(program: Command): void {
  program
    .command("worker")
    .description("BullMQ workers and the discovery scheduler; the status page, /healthz, /metrics and /admin/queues over HTTP")
    .option("--concurrency <n>", "campaign-sync jobs run at once by this process (overrides COLDSYNC_CONCURRENCY)")
    .option("--port <n>", "port for the status page, health, metrics and the queue dashboard (overrides COLDSYNC_HTTP_PORT)")
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
      const databaseUrl = config.warehouse.databaseUrl;
      if (databaseUrl === undefined) throw new ConfigError(["DATABASE_URL: required"]);
      // Loaded only when the command runs: `worker --help` needs neither the queues, the database nor the web server.
      const { runWorker } = await import("./worker-process.ts");
      await runWorker(config, { databaseUrl, tuning });
    });
}

