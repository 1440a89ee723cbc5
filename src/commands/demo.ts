import type { Command } from "commander";
import { duration } from "../config.ts";

interface DemoFlags {
  seed: string;
  serve?: boolean;
  port?: string;
  every: string;
}

export function register(program: Command): void {
  program
    .command("demo")
    .description("emulator + embedded warehouse + one sync, then the campaign funnel; needs no services")
    .option("--seed <n>", "emulator seed", "1")
    .option("--serve", "then keep running: serve the status page and sync again every --every, until Ctrl-C")
    .option("--port <n>", "status page port with --serve (overrides COLDSYNC_HTTP_PORT; 0 picks a free one)")
    .option("--every <duration>", "with --serve: play the emulator an hour forward and sync again this often", "30s")
    .action(async (flags: DemoFlags) => {
      const seed = Number(flags.seed);
      if (!Number.isInteger(seed)) throw new Error(`--seed: must be an integer, got "${flags.seed}"`);
      const everyMs = duration.safeParse(flags.every);
      if (!everyMs.success) throw new Error(`--every: must be a duration such as 30s or 5m, got "${flags.every}"`);
      // Loaded only when the command runs: `demo --help` needs neither the emulator, the warehouse nor the web server.
      const { runDemo } = await import("./demo-session.ts");
      await runDemo({ seed, everyMs: everyMs.data, serve: flags.serve === true, ...(flags.port === undefined ? {} : { port: flags.port }) });
    });
}
