import { once } from "node:events";
import { createInterface } from "node:readline";

/**
 * Phases that run at the same time (bench/backfill's "at once" limit) start
 * their clocks together: with BENCH_START_GATE=1, a phase that is set up says
 * `ready` on its standard output and waits for a line on its standard input.
 * Without it, the gate is open.
 */
export async function passStartGate(): Promise<void> {
  if (process.env.BENCH_START_GATE !== "1") return;
  console.log("ready");
  const lines = createInterface({ input: process.stdin });
  await once(lines, "line");
  lines.close();
}
