import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The `coldsync` command as a user runs it: a real process, its exit code and its output. */

export const BIN = fileURLToPath(new URL("../../bin/coldsync.js", import.meta.url));

export interface CommandOutcome {
  /** null when the process ended by a signal (a command that had to be stopped after `timeoutMs`). */
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CommandOptions {
  /** Ends, by SIGTERM, a command that should have stopped by then. */
  timeoutMs?: number;
  /** The working directory, also given as HOME: a new user's scratch directory. */
  cwd?: string;
  /** Written to the command's standard input, which is then closed (closed at once when not given). */
  input?: string;
}

/** Runs `coldsync args` with PATH and `env` only, so that nothing of the test's own environment leaks in. */
export function runColdsync(args: string[], env: Record<string, string>, options: CommandOptions = {}): Promise<CommandOutcome> {
  const { timeoutMs = 60_000, cwd, input } = options;
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? "", ...(cwd === undefined ? {} : { HOME: cwd }), ...env },
    ...(cwd === undefined ? {} : { cwd }),
    timeout: timeoutMs,
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  child.stdin.end(input);
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}
