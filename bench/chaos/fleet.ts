import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";

/**
 * The chaos run's worker processes: `coldsync worker`, as production runs it,
 * each restartable after a SIGKILL. Every line they print is kept, so the run
 * can check that nothing was written outside the JSON log stream.
 */

/** From dist/bench/chaos/ the repository's bin/ is three levels up, from bench/chaos/ two. */
const BIN = fileURLToPath(new URL(import.meta.url.includes("/dist/") ? "../../../bin/coldsync.js" : "../../bin/coldsync.js", import.meta.url));

export class WorkerFleet {
  readonly #env: Record<string, string>;
  readonly #args: readonly string[];
  readonly #processes: (ChildProcess | undefined)[];
  readonly lines: string[] = [];
  kills = 0;
  restarts = 0;

  /** `args` follow `coldsync worker`; the chaos run's short stall timeout by default. */
  constructor(size: number, env: Record<string, string>, args: readonly string[] = ["--stall-timeout", "5s"]) {
    this.#env = env;
    this.#args = args;
    this.#processes = new Array<ChildProcess | undefined>(size).fill(undefined);
  }

  get size(): number {
    return this.#processes.length;
  }

  startAll(): void {
    for (let index = 0; index < this.#processes.length; index += 1) this.#start(index);
  }

  #start(index: number): void {
    const child = spawn(process.execPath, [BIN, "worker", ...this.#args], {
      env: { PATH: process.env.PATH ?? "", ...this.#env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let partial = "";
    const collect = (chunk: Buffer) => {
      partial += chunk.toString();
      const complete = partial.split("\n");
      partial = complete.pop() ?? "";
      this.lines.push(...complete.filter((line) => line.trim() !== ""));
    };
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    this.#processes[index] = child;
  }

  /** SIGKILLs worker `index` (no drain, no cleanup) and starts a new one in its place after `restartAfterMs`. */
  async killAndRestart(index: number, restartAfterMs: number): Promise<void> {
    const child = this.#processes[index];
    if (child && child.exitCode === null) {
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
      this.kills += 1;
    }
    await new Promise((resolve) => setTimeout(resolve, restartAfterMs));
    this.#start(index);
    this.restarts += 1;
  }

  /** Drains every worker with SIGTERM; resolves to their exit codes. */
  async stopAll(): Promise<(number | null)[]> {
    return Promise.all(
      this.#processes.map(async (child) => {
        if (!child || child.exitCode !== null) return child?.exitCode ?? null;
        const exited = once(child, "exit") as Promise<[number | null]>;
        child.kill("SIGTERM");
        const [code] = await exited;
        return code;
      }),
    );
  }

  /** How many JSON log lines the fleet wrote at each level (pino's numbers: 40 warn, 50 error, 60 fatal). */
  linesByLevel(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const line of this.lines) {
      try {
        const level = String((JSON.parse(line) as { level?: unknown }).level ?? "none");
        counts[level] = (counts[level] ?? 0) + 1;
      } catch {
        // Stray lines are counted by strayLines().
      }
    }
    return counts;
  }

  /** The messages of lines at `level` or above (pino numbers), with their error's message, for the report. */
  linesAtOrAbove(level: number): string[] {
    const found: string[] = [];
    for (const line of this.lines) {
      try {
        const parsed = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
        if ((parsed.level ?? 0) >= level) found.push(`${parsed.msg ?? ""}${parsed.err?.message ? `: ${parsed.err.message}` : ""}`);
      } catch {
        // Stray lines are counted by strayLines().
      }
    }
    return found;
  }

  /** The first JSON log line whose message starts with `message`, parsed; undefined until one was written. */
  firstLogged(message: string): Record<string, unknown> | undefined {
    for (const line of this.lines) {
      try {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        if (typeof parsed.msg === "string" && parsed.msg.startsWith(message)) return parsed;
      } catch {
        // Not a JSON line.
      }
    }
    return undefined;
  }

  /** Lines that are not JSON log lines (a raw stack trace, a stray print). */
  strayLines(): string[] {
    return this.lines.filter((line) => {
      try {
        return typeof JSON.parse(line) !== "object";
      } catch {
        return true;
      }
    });
  }
}
