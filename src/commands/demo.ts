import type { Command } from "commander";
import { z } from "zod";
import { configSchema, duration } from "../config.ts";
import { seedNumber } from "../emulator/options.ts";
import { flag, readFlagsAndConfig, withoutOverridden } from "./flags.ts";

interface DemoFlags {
  seed: string;
  serve?: boolean;
  port?: string;
  every: string;
}

const demoFlags = z.object({
  // Plain decimal digits, as every number the README's table takes (z.coerce would read 0x10 and 1e3).
  "--seed": flag(z.string().trim().regex(/^-?\d+$/, "must be an integer in plain decimal digits").transform(Number).pipe(seedNumber)),
  // Read by the rule of COLDSYNC_HTTP_PORT, which it overrides.
  "--port": flag(configSchema.shape.COLDSYNC_HTTP_PORT).optional(),
  "--every": flag(duration),
});

export function register(program: Command): void {
  program
    .command("demo")
    .description("emulator + embedded warehouse + one sync, then the campaign funnel; needs no services")
    .option("--seed <n>", "emulator seed", "1")
    .option("--serve", "then keep running: serve the status page and sync again every --every, until Ctrl-C")
    .option("--port <n>", "status page port with --serve (overrides COLDSYNC_HTTP_PORT; 0 picks a free one)")
    .option("--every <duration>", "with --serve: play the emulator an hour forward and sync again this often", "30s")
    .action(async (given: DemoFlags) => {
      // Loaded only when the command runs: `demo --help` needs neither the emulator, the warehouse nor the web server.
      const { demoConfig, runDemo } = await import("./demo-session.ts");
      // Flags and settings are read before anything starts: every problem of both stops the demo at once.
      const { flags, config } = readFlagsAndConfig(demoFlags, { "--seed": given.seed, "--port": given.port, "--every": given.every }, () =>
        demoConfig(withoutOverridden(process.env, { COLDSYNC_HTTP_PORT: given.port })),
      );
      const port = flags["--port"];
      const settings = port === undefined ? config : { ...config, http: { ...config.http, port } };
      await runDemo(settings, { seed: flags["--seed"], everyMs: flags["--every"], serve: given.serve === true });
    });
}
