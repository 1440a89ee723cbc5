import type { Command } from "commander";
import { z } from "zod";
import { configSchema, loadConfig } from "../config.ts";
import { flag, readFlagsAndConfig, withoutOverridden } from "./flags.ts";

/**
 * `coldsync prune`: deletes the run log (sync_runs, verifications) that
 * finished before COLDSYNC_RUN_RETENTION, or `--older-than`, keeping what
 * src/sync/retention.ts keeps. The worker does the same every hour; this is
 * for `sync --once` deployments, a first pass over a long history, or a look
 * at what would go (`--dry-run`).
 */

interface PruneFlags {
  olderThan?: string;
  dryRun?: boolean;
}

/** `--older-than` replaces COLDSYNC_RUN_RETENTION, so it is read by that setting's rule. */
const pruneFlags = z.object({ "--older-than": flag(configSchema.shape.COLDSYNC_RUN_RETENTION).optional() });

export function register(program: Command): void {
  program
    .command("prune")
    .description("delete finished sync runs and verifications older than COLDSYNC_RUN_RETENTION (never a synced row, its history or a rejected record)")
    .option("--older-than <duration>", "how old a finished run must be to go, such as 90d (overrides COLDSYNC_RUN_RETENTION)")
    .option("--dry-run", "count what would be deleted, deleting nothing")
    .action(async (given: PruneFlags) => {
      const { flags, config } = readFlagsAndConfig(pruneFlags, { "--older-than": given.olderThan }, () =>
        loadConfig(withoutOverridden(process.env, { COLDSYNC_RUN_RETENTION: given.olderThan })),
      );
      const retentionMs = given.olderThan === undefined ? config.runRetentionMs : flags["--older-than"];
      if (retentionMs === undefined) {
        console.log("the run retention is off: nothing pruned (--older-than D prunes what finished more than D ago)");
        return;
      }
      // Loaded only when the command runs: `prune --help` needs no database driver.
      const { runPrune } = await import("./prune-report.ts");
      await runPrune(config, new Date(Date.now() - retentionMs), given.dryRun === true);
    });
}
