import type { Command } from "commander";
import { loadConfig } from "../config.ts";

export function register(program: Command): void {
  program
    .command("status")
    .description("checkpoints, last runs and lag per campaign")
    .action(async () => {
      const config = loadConfig(process.env);
      // Loaded only when the command runs: `status --help` needs no database driver.
      const { printStatus } = await import("./status-report.ts");
      await printStatus(config);
    });
}
