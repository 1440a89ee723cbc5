import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { BIN } from "../emulator-process.ts";

/**
 * Start-up as a user meets it: the bin (the bundled build when current), median of a few runs. A command loads
 * only its own modules (`coldsync sync --help`: what `sync --once` loads before it starts); the program's own help
 * loads every command's, the worker's queues and web server included.
 */

const run = promisify(execFile);
const RUNS = 5;

async function median(args: string[]): Promise<number> {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const times: number[] = [];
  for (let index = 0; index < RUNS; index += 1) {
    const started = performance.now();
    await run(process.execPath, [BIN, ...args], { env });
    times.push((performance.now() - started) / 1000);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(RUNS / 2)] as number;
}

export async function measureStartup(): Promise<{ command: number; everything: number; runs: number }> {
  return { command: await median(["sync", "--help"]), everything: await median(["--help"]), runs: RUNS };
}
