import type { Command } from "commander";
import { loadConfig } from "../config.ts";

export function register(program: Command): void {
  program
    .command("sync")
    .description("one full walk of the account in this process (no Redis); exit 0 only if the run succeeded")
    .requiredOption("--once", "run once and exit (the worker keeps syncing on a schedule)")
    .option("--campaign <uid>", "limit the run to one campaign's streams")
    .action(async (options: { once: boolean; campaign?: string }) => {
      const config = loadConfig(process.env, ["apiKey"]);
      // Loaded only when the command runs: `sync --help` needs neither the database driver, the HTTP client nor the logger.
      const [{ openRuntime }, { commandLogger }, { syncOnce }] = await Promise.all([import("../runtime.ts"), import("./output.ts"), import("./sync-once.ts")]);
      const logger = commandLogger(config);
      const runtime = await openRuntime(config, { logger });
      try {
        await syncOnce(runtime, logger, { trigger: "cli", ...(options.campaign ? { campaignUid: options.campaign } : {}) });
      } finally {
        await runtime.close();
      }
    });
}
