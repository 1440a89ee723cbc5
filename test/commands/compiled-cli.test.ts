import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Production runs the compiled JavaScript: the project is built into a
 * scratch directory (inside node_modules/.cache, so that its imports resolve
 * to the project's packages) with the bin copied beside it, and run under a
 * resolve hook that writes down every module it loads. No TypeScript loader
 * may be among them.
 */

const exec = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const TSC = createRequire(import.meta.url).resolve("typescript/bin/tsc");

/** A resolve hook, registered through --import: appends each resolved URL to the file it is given. */
const RECORDER = `
import { appendFileSync } from "node:fs";
let log;
export function initialize(data) { log = data.log; }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(log, result.url + "\\n");
  return result;
}`;

let scratch: string;

beforeAll(async () => {
  await mkdir(join(ROOT, "node_modules/.cache"), { recursive: true });
  scratch = await mkdtemp(join(ROOT, "node_modules/.cache/coldsync-compiled-"));
  await exec(process.execPath, [TSC, "-p", join(ROOT, "tsconfig.build.json"), "--outDir", join(scratch, "dist")], { cwd: ROOT });
  await exec(process.execPath, [join(ROOT, "scripts/bundle.js"), join(scratch, "dist")], { cwd: ROOT });
  await mkdir(join(scratch, "bin"));
  await copyFile(join(ROOT, "bin/coldsync.js"), join(scratch, "bin/coldsync.js"));
  await writeFile(join(scratch, "recorder.mjs"), RECORDER);
  await writeFile(
    join(scratch, "register.mjs"),
    `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(join(scratch, "recorder.mjs")).href)}, { data: { log: process.env.MODULE_LOG } });\n`,
  );
}, 180_000);

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** Runs `script` with `args` under the recorder, with no NODE_OPTIONS; returns its output and every module it loaded. */
async function runRecorded(name: string, script: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string; loaded: string[] }> {
  const log = join(scratch, `${name}.log`);
  await writeFile(log, "");
  const env: NodeJS.ProcessEnv = { ...process.env, MODULE_LOG: log };
  delete env.NODE_OPTIONS;
  let outcome: { code: number; stdout: string; stderr: string };
  try {
    const { stdout, stderr } = await exec(process.execPath, ["--import", pathToFileURL(join(scratch, "register.mjs")).href, script, ...args], { env, cwd: scratch });
    outcome = { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    outcome = { code: failed.code ?? -1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
  return { ...outcome, loaded: (await readFile(log, "utf8")).split("\n").filter((line) => line !== "") };
}

const typescriptLoaded = (loaded: readonly string[]) => loaded.filter((url) => url.includes("/node_modules/tsx/") || url.endsWith(".ts"));

describe("the compiled command line", () => {
  it.each(["dist/src/cli.js", "dist/bundle/cli.js"])("prints the package's version from %s", async (entry) => {
    const { version } = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { version: string };
    const run = await runRecorded(`version_${entry.replace(/\W/g, "_")}`, join(scratch, entry), ["--version"]);
    expect(run.stderr).toBe("");
    expect(run.stdout.trim()).toBe(version);
  });

  it.each(["dist/src/cli.js", "dist/bundle/cli.js"])("runs --help from the compiled entry point %s with no TypeScript loader", async (entry) => {
    const run = await runRecorded(entry.replace(/\W/g, "_"), join(scratch, entry), ["--help"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Usage: coldsync");
    expect(run.stdout).toContain("worker");
    expect(run.loaded).toContain(pathToFileURL(join(scratch, entry)).href);
    expect(typescriptLoaded(run.loaded)).toEqual([]);
  });

  // What the commands run (queues, database drivers, web servers, the HTTP client, the logger) loads only when one runs.
  const IMPLEMENTATION_PACKAGES = ["bullmq", "ioredis", "pg", "@electric-sql/pglite", "fastify", "undici", "pino"];

  it.each(["--help", "migrate --help", "worker --help", "demo --help", "verify --help", "sql --help"])(
    "is what the bin runs when the build is current, and `%s` loads no command's implementation",
    async (line) => {
      const args = line.split(" ");
      const run = await runRecorded(`bin_${args.join("_")}`, join(scratch, "bin/coldsync.js"), args);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`Usage: coldsync${args.length > 1 ? ` ${args[0]}` : ""}`);
      expect(run.loaded).toContain(pathToFileURL(join(scratch, "dist/bundle/cli.js")).href);
      expect(run.loaded.filter((url) => url.includes("/dist/src/"))).toEqual([]);
      expect(IMPLEMENTATION_PACKAGES.filter((name) => run.loaded.some((url) => url.includes(`/node_modules/${name}/`)))).toEqual([]);
      expect(typescriptLoaded(run.loaded)).toEqual([]);
    },
  );

  it("is not run by the bin once a source is newer than the build", async () => {
    await mkdir(join(scratch, "src"));
    const edited = join(scratch, "src/edited.ts");
    await writeFile(edited, "export {};\n");
    const later = new Date(Date.now() + 60_000);
    await utimes(edited, later, later);
    try {
      const run = await runRecorded("stale", join(scratch, "bin/coldsync.js"), ["--help"]);
      expect(run.loaded.some((url) => url.includes("/node_modules/tsx/"))).toBe(true);
      expect(run.loaded).not.toContain(pathToFileURL(join(scratch, "dist/bundle/cli.js")).href);
    } finally {
      await rm(join(scratch, "src"), { recursive: true, force: true });
    }
  });
});
