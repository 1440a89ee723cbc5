// Bundles the compiled command line (dist/src/cli.js, from tsc) into dist/bundle/ together with the pure-JavaScript
// packages that load as hundreds of small modules (kysely: 262 files, zod: 95): Node 20 compiles every module file
// on every start, and those files were most of a command's start-up. Other packages stay external: some read files
// beside their own code (bullmq's Lua scripts, PGlite's WebAssembly, pino's transports).
//   node scripts/bundle.js [dist directory, default dist]
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";

const dist = process.argv[2] ?? "dist";
const { dependencies } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const BUNDLED = new Set(["kysely", "kysely-pglite-dialect", "zod"]);

// esbuild leaves the chunks of earlier builds in place; they would pile up beside the current ones.
rmSync(join(dist, "bundle"), { recursive: true, force: true });
await build({
  entryPoints: [join(dist, "src/cli.js")],
  outdir: join(dist, "bundle"),
  bundle: true,
  // Each command stays a chunk of its own, loaded only when it runs (src/cli.ts).
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external: Object.keys(dependencies).filter((name) => !BUNDLED.has(name)),
  sourcemap: true,
  logLevel: "warning",
});
