import type { Command } from "commander";
import { z } from "zod";
import { loadConfig } from "../config.ts";
import { campaignFlag, readFlagsAndConfig } from "./flags.ts";

const syncFlags = z.object({ "--campaign": campaignFlag });

export function register(program: Command): void {
  program
    .command("sync")
    .description("one full walk of the account in this process (no Redis); exit 0 only if the run succeeded")
    .requiredOption("--once", "run once and exit (the worker keeps syncing on a schedule)")
    .option("--campaign <uid>", "limit the run to one campaign's streams")
    .action(async (options: { once: boolean; campaign?: string }) => {
      const { flags, config } = readFlagsAndConfig(syncFlags, { "--campaign": options.campaign }, () => loadConfig(process.env, ["apiKey"]));
      const campaignUid = flags["--campaign"];
      // Loaded only when the command runs: `sync --help` needs neither the database driver, the HTTP client nor the logger.
      const [{ openRuntime }, { commandLogger }, { syncOnce }] = await Promise.all([import("../runtime.ts"), import("./output.ts"), import("./sync-once.ts")]);
      const logger = commandLogger(config);
      const runtime = await openRuntime(config, { logger });
      try {
        await syncOnce(runtime, logger, { trigger: "cli", ...(campaignUid === undefined ? {} : { campaignUid }) });
      } finally {
        await runtime.close();
      }
    });
}
