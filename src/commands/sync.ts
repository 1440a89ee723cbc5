import type { Command } from "commander";
import { loadConfig } from "../config.ts";
import { openRuntime } from "../runtime.ts";
import { runFullSync } from "../sync/runs.ts";
import { migrateToLatest } from "../warehouse/migrate.ts";
import { commandLogger, progressDisplay, runSummaryText } from "./output.ts";

export function register(program: Command): void {
  program
    .command("sync")
    .description("one full walk of the account in this process (no Redis); exit 0 only if every stream finished")
    .requiredOption("--once", "run once and exit (the worker keeps syncing on a schedule)")
    .option("--campaign <uid>", "limit the run to one campaign's streams")
    .action(async (options: { once: boolean; campaign?: string }) => {
      const config = loadConfig(process.env, ["apiKey"]);
      const logger = commandLogger(config);
      const runtime = await openRuntime(config, { logger });
      const controller = new AbortController();
      const stop = () => controller.abort();
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
      try {
        await migrateToLatest(runtime.warehouse);
        const progress = progressDisplay(logger);
        const summary = await runFullSync(runtime.syncContext({ trigger: "cli", signal: controller.signal }), {
          ...(options.campaign ? { campaignUid: options.campaign } : {}),
          onProgress: (state) => progress.update(state),
        });
        progress.stop();
        console.log(runSummaryText(summary));
        process.exitCode = summary.outcome === "succeeded" ? 0 : 1;
      } finally {
        process.off("SIGINT", stop);
        process.off("SIGTERM", stop);
        await runtime.close();
      }
    });
}
