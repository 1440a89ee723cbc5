import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import type { ClockMode, SeedScale } from "../src/emulator/options.ts";

/**
 * The emulator in a process of its own, so that its memory never counts in
 * the figures of the process being measured.
 */

/** From dist/bench/ the repository's bin/ is two levels up, from bench/ one. */
export const BIN = fileURLToPath(new URL(import.meta.url.includes("/dist/") ? "../../bin/coldsync.js" : "../bin/coldsync.js", import.meta.url));

export interface EmulatorProcess {
  url: string;
  stop(): Promise<void>;
}

export interface EmulatorProcessOptions {
  scale: SeedScale;
  seed: number;
  /** One account per key. */
  apiKeys: readonly string[];
  drift?: "mild" | "wild";
  /** `wall`: simulated time also elapses at real speed (src/emulator/clock.ts); `manual` by default. */
  clock?: ClockMode;
  /** Serve the /admin/ routes (simulated clock, ground truth, settings). */
  admin?: boolean;
}

export async function spawnEmulator(args: EmulatorProcessOptions): Promise<EmulatorProcess> {
  const flags = [
    ...["--port", "0", "--scale", args.scale, "--seed", String(args.seed), "--api-keys", args.apiKeys.join(",")],
    ...(args.drift ? ["--drift", args.drift] : []),
    ...(args.clock ? ["--clock", args.clock] : []),
    ...(args.admin ? ["--admin"] : []),
  ];
  const child: ChildProcess = spawn(process.execPath, [BIN, "emulator", ...flags], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, COLDSYNC_LOG_LEVEL: "warn" },
  });
  const url = await new Promise<string>((resolve, reject) => {
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const match = /(http:\/\/[\w.[\]:-]+:\d+)/.exec(output);
      if (match?.[1]) resolve(match[1]);
    });
    child.once("exit", (code) => reject(new Error(`the emulator exited (${code}) before printing its address:\n${output}`)));
  });
  return {
    url,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      await once(child, "exit");
    },
  };
}
