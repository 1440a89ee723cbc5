import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";
import pg from "pg";
import { printBreakdown, printPhases, type PhaseResult } from "./backfill/print.ts";
import { measureStartup } from "./backfill/startup.ts";
import { spawnEmulator } from "./emulator-process.ts";
import { printResults, type Target } from "./report.ts";

/**
 * bench/backfill: a full sync of the `medium` and `large` seeds next to
 * limits measured in the same run on the same answers: fetch-only (every page
 * walked and parsed, nothing written), the database's own limit (COPY of the
 * same rows into the same tables), the two at once (what any sync, which must
 * do both, meets on the machine's cores), and the naive per-row script a user
 * would write. On `medium` the sync also runs against the emulator with drift on,
 * to show that tolerating deviations costs clean records nothing. Each phase
 * runs in a child process so that peak RSS is that phase's alone.
 *
 *   node dist/bench/backfill.js [--scales medium,large] [--skip naive,drift]
 */

const run = promisify(execFile);
/** `npm run bench` runs the compiled benchmark, so each phase measures compiled JavaScript, as production runs it. */
const COMPILED = import.meta.url.endsWith(".js");
const PHASE = fileURLToPath(new URL(COMPILED ? "./backfill-phase.js" : "./backfill-phase.ts", import.meta.url));
const PHASE_RUNTIME = COMPILED ? [] : ["--import", "tsx"];
const KEY = "bench";
const CONCURRENCY = "8";

type Scale = "medium" | "large";

async function phase(...args: string[]): Promise<PhaseResult> {
  const env = { ...process.env, COLDSYNC_HTTP_CONCURRENCY: CONCURRENCY };
  const { stdout } = await run(process.execPath, [...PHASE_RUNTIME, PHASE, ...args], { maxBuffer: 1 << 20, env });
  return resultOf(stdout);
}

/** The last line a phase printed: its figures. */
function resultOf(stdout: string): PhaseResult {
  return JSON.parse(stdout.trim().split("\n").at(-1) as string) as PhaseResult;
}

/**
 * Phases run side by side, their clocks started together once each is set up (start-gate.ts); each reports its
 * own seconds, and the slower one is how long they took at once.
 */
async function phasesAtOnce(...phases: string[][]): Promise<PhaseResult[]> {
  const env = { ...process.env, COLDSYNC_HTTP_CONCURRENCY: CONCURRENCY, BENCH_START_GATE: "1" };
  const running = phases.map((args) => {
    const child = spawn(process.execPath, [...PHASE_RUNTIME, PHASE, ...args], { env, stdio: ["pipe", "pipe", "inherit"] });
    let stdout = "";
    const ready = new Promise<void>((resolve) => {
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        stdout += chunk;
        if (stdout.startsWith("ready\n")) resolve();
      });
    });
    const exited = once(child, "exit").then(([code]) => {
      if (code !== 0) throw new Error(`bench phase ${args[0]} exited with ${String(code)}`);
      return resultOf(stdout);
    });
    return { child, ready, exited };
  });
  await Promise.race([Promise.all(running.map((phase) => phase.ready)), Promise.all(running.map((phase) => phase.exited))]);
  for (const { child } of running) child.stdin.end("go\n");
  return Promise.all(running.map((phase) => phase.exited));
}

async function dropSchemas(databaseUrl: string, schemas: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}

interface ScaleFigures {
  fetchOnly: PhaseResult;
  copy: PhaseResult;
  /** Fetch-only and COPY started together: the slower's seconds, and each one's own figures. */
  atOnce: { seconds: number; fetchOnly: PhaseResult; copy: PhaseResult };
  naive?: PhaseResult;
  sync: PhaseResult;
  /** Best of two against the drifting emulator, and the best of two clean syncs it is compared with. */
  drift?: { clean: PhaseResult; drifting: PhaseResult };
}

const fastest = (results: PhaseResult[]) => results.reduce((best, result) => (result.seconds < best.seconds ? result : best));

async function measureScale(databaseUrl: string, scale: Scale, skip: ReadonlySet<string>): Promise<ScaleFigures> {
  const emulator = await spawnEmulator({ scale, seed: 1, apiKeys: [KEY] });
  const drifting = scale === "medium" && !skip.has("drift") ? await spawnEmulator({ scale, seed: 1, apiKeys: [KEY], drift: "mild" }) : undefined;
  const scratch = await mkdtemp(join(tmpdir(), "coldsync-bench-"));
  const schema = (name: string) => `bench_${randomBytes(3).toString("hex")}_${scale}_${name}`;
  const used: string[] = [];
  const fresh = (name: string) => {
    used.push(schema(name));
    return used.at(-1) as string;
  };
  try {
    const answers = join(scratch, "answers.tsv");
    const sync = (url: string, partialOk = false) => phase("sync", url, KEY, databaseUrl, fresh("sync"), ...(partialOk ? ["partial-ok"] : []));
    const fetchOnly = await phase("fetch", emulator.url, KEY, answers);
    const copy = await phase("copy", databaseUrl, fresh("copy"), answers);
    const together = [["fetch", emulator.url, KEY, join(scratch, "answers-again.tsv")], ["copy", databaseUrl, fresh("copy"), answers]];
    const [fetchedAgain, copiedAgain] = (await phasesAtOnce(...together)) as [PhaseResult, PhaseResult];
    const atOnce = { seconds: Math.max(fetchedAgain.seconds, copiedAgain.seconds), fetchOnly: fetchedAgain, copy: copiedAgain };
    const naive = skip.has("naive") ? undefined : await phase("naive", databaseUrl, fresh("naive"), answers);
    const clean = [await sync(emulator.url)];
    let drift: ScaleFigures["drift"];
    if (drifting !== undefined) {
      // Alternated, so that a slow spell of a shared machine does not land on one side only.
      const withDrift = [await sync(drifting.url, true)];
      clean.push(await sync(emulator.url));
      withDrift.push(await sync(drifting.url, true));
      drift = { clean: fastest(clean), drifting: fastest(withDrift) };
    }
    return { fetchOnly, copy, atOnce, ...(naive ? { naive } : {}), sync: clean[0] as PhaseResult, ...(drift ? { drift } : {}) };
  } finally {
    await dropSchemas(databaseUrl, used);
    await rm(scratch, { recursive: true, force: true });
    await emulator.stop();
    await drifting?.stop();
  }
}

function targetsOf(figures: Partial<Record<Scale, ScaleFigures>>, startupSeconds: number): Target[] {
  const targets: Target[] = [];
  for (const scale of ["medium", "large"] as const) {
    const scaleFigures = figures[scale];
    if (scaleFigures === undefined) continue;
    const { fetchOnly, copy, atOnce, naive, sync } = scaleFigures;
    const limit = Math.max(fetchOnly.seconds, copy.seconds);
    // The targets are set on `large`; `medium`'s ratios are printed for comparison.
    const enforced = scale === "large" ? "" : " (info)";
    targets.push({ name: `sync / slower limit (${scale})${enforced}`, value: sync.seconds / limit, limit: 1.3, lowerIsBetter: true, informational: scale !== "large" });
    // No verdicts: the least sync / slower limit any sync could show on these cores, and the sync against that.
    targets.push({ name: `fetch and COPY at once / slower limit (${scale}) (info)`, value: atOnce.seconds / limit, limit: 1.3, lowerIsBetter: true, informational: true });
    targets.push({ name: `sync / fetch and COPY at once (${scale}) (info)`, value: sync.seconds / atOnce.seconds, limit: 1.3, lowerIsBetter: true, informational: true });
    if (naive) targets.push({ name: `naive script / sync (${scale})${enforced}`, value: naive.seconds / sync.seconds, limit: 10, lowerIsBetter: false, informational: scale !== "large" });
    if (scale === "large") targets.push({ name: "sync peak RSS MB (large)", value: sync.peakRssMb, limit: 250, lowerIsBetter: true });
  }
  if (figures.medium && figures.large) targets.push({ name: "peak RSS large / medium", value: figures.large.sync.peakRssMb / figures.medium.sync.peakRssMb, limit: 1.1, lowerIsBetter: true });
  const drift = figures.medium?.drift;
  if (drift) targets.push({ name: "sync wall, drift mild / clean (medium)", value: drift.drifting.seconds / drift.clean.seconds, limit: 1.05, lowerIsBetter: true });
  targets.push({ name: "start-up s (coldsync sync --help)", value: startupSeconds, limit: 0.5, lowerIsBetter: true });
  return targets;
}

export async function runBackfillBench(argv: string[] = []): Promise<Target[]> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error("bench/backfill needs DATABASE_URL (a PostgreSQL it may create scratch schemas in)");
  const { values } = parseArgs({ args: argv, options: { scales: { type: "string", default: "medium,large" }, skip: { type: "string", default: "" } } });
  const scales = values.scales.split(",") as Scale[];
  const skip = new Set(values.skip.split(","));
  const figures: Partial<Record<Scale, ScaleFigures>> = {};
  for (const scale of scales) {
    const scaleFigures = await measureScale(databaseUrl, scale, skip);
    figures[scale] = scaleFigures;
    printPhases(scale, [
      ["fetch-only", scaleFigures.fetchOnly],
      ["write-only (COPY)", scaleFigures.copy],
      ["fetch-only, run with COPY", scaleFigures.atOnce.fetchOnly],
      ["COPY, run with fetch-only", scaleFigures.atOnce.copy],
      ...(scaleFigures.naive ? ([["naive per-row script", scaleFigures.naive]] as const) : []),
      ["sync", scaleFigures.sync],
      ...(scaleFigures.drift ? ([["sync (best of 2)", scaleFigures.drift.clean], ["sync, drift mild (best of 2)", scaleFigures.drift.drifting]] as const) : []),
    ]);
    printBreakdown(scaleFigures.sync);
  }
  const startup = await measureStartup();
  console.log(`\n  start-up, median of ${startup.runs} runs: coldsync sync --help ${startup.command.toFixed(2)} s, coldsync --help (every command) ${startup.everything.toFixed(2)} s`);
  const targets = targetsOf(figures, startup.command);
  printResults(targets);
  return targets;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const targets = await runBackfillBench(process.argv.slice(2));
  process.exitCode = targets.every((target) => target.pass || target.informational) ? 0 : 1;
}
