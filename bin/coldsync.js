#!/usr/bin/env node
// Runs the compiled, bundled JavaScript (dist/bundle/, built by `npm run build`, which `prepare` runs after `npm ci`):
// compiling TypeScript on every start cost about a second. A checkout whose sources are newer than that build (or
// that has none) runs the sources through tsx instead, so an edit is never shadowed by a stale build.
import { existsSync, readdirSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const compiled = new URL("../dist/bundle/cli.js", import.meta.url);

function newestSource(directory) {
  let newest = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith(".ts")) newest = Math.max(newest, statSync(`${entry.parentPath ?? entry.path}/${entry.name}`).mtimeMs);
  }
  return newest;
}

function compiledIsCurrent() {
  if (!existsSync(compiled)) return false;
  const builtAt = statSync(compiled).mtimeMs;
  return ["src", "migrations"].every((directory) => !existsSync(`${root}${directory}`) || newestSource(`${root}${directory}`) <= builtAt);
}

if (compiledIsCurrent()) {
  await import(compiled.href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/cli.ts");
}
