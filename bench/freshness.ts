import { parseArgs } from "node:util";
import { printResults } from "./report.ts";
import { reportLines, targetsOf } from "./freshness/print.ts";
import { runFreshness } from "./freshness/run.ts";

/**
 * `npm run bench:freshness` (issue 12, README "Freshness"): how long replies,
 * clicks and opens take to reach the warehouse with the default rhythms, next
 * to a worker configured as coldsync ran before them, measured in the same
 * run; requests a minute; and the requests of cycles where nothing changed
 * against the README formula. Needs a PostgreSQL it may create a database on
 * (DATABASE_URL, default the local server) and redis-server on the PATH (a
 * Redis of the run's own); takes the backfill, `--minutes`, and about three
 * minutes more.
 *
 *   npm run bench:freshness -- [--minutes 5] [--seed 1] [--ticks 2] [--keep-database]
 */

const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "5" },
    seed: { type: "string", default: "1" },
    ticks: { type: "string", default: "2" },
    "keep-database": { type: "boolean", default: false },
  },
});

const minutes = Number(values.minutes);
const ticks = Number(values.ticks);
if (!(minutes > 0) || !Number.isInteger(ticks) || ticks < 1 || !Number.isInteger(Number(values.seed))) {
  console.error("usage: npm run bench:freshness -- [--minutes <n > 0>] [--seed <integer>] [--ticks <integer ≥ 1>] [--keep-database]");
  process.exit(2);
}

const report = await runFreshness({
  databaseUrl: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
  seed: Number(values.seed),
  minutes,
  ticks,
  keepDatabase: values["keep-database"] ?? false,
  log: (line) => console.error(`freshness: ${line}`),
});
for (const line of reportLines(report)) console.log(line);
console.log("");
const targets = targetsOf(report);
printResults(targets);
process.exitCode = targets.every((target) => target.pass || target.informational) ? 0 : 1;
