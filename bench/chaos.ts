import { parseArgs } from "node:util";
import { reportText, runChaos } from "./chaos/scenario.ts";

/**
 * `npm run chaos`: a fleet of workers under fire (README, "Failure modes").
 * Needs a PostgreSQL it may create a database on (DATABASE_URL, default the
 * local server) and redis-server on the PATH; never touches the user's Redis.
 *
 *   npm run chaos -- --seed 7 --workers 3 --kills 10 [--restart-postgres]
 */

const { values } = parseArgs({
  options: {
    seed: { type: "string", default: "1" },
    scale: { type: "string", default: "medium" },
    workers: { type: "string", default: "3" },
    kills: { type: "string", default: "10" },
    "redis-restarts": { type: "string", default: "2" },
    "postgres-terminations": { type: "string", default: "2" },
    "restart-postgres": { type: "boolean", default: false },
  },
});

const report = await runChaos({
  databaseUrl: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
  seed: Number(values.seed),
  scale: values.scale as "small" | "medium" | "large",
  workers: Number(values.workers),
  kills: Number(values.kills),
  redisRestarts: Number(values["redis-restarts"]),
  postgresTerminations: Number(values["postgres-terminations"]),
  restartPostgres: values["restart-postgres"] ?? false,
  spacingMs: 2_500,
  settleTimeoutMs: 240_000,
  log: (line) => console.error(`chaos: ${line}`),
});
console.log(reportText(report));
process.exitCode = report.ok ? 0 : 1;
