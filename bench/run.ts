import { runBackfillBench } from "./backfill.ts";
import { runUpsertBench } from "./upserts.ts";

/** `npm run bench`: every benchmark, each printing its ratios against the limits it measured in the same run. */

await runUpsertBench();
const backfill = await runBackfillBench(process.argv.slice(2));
process.exitCode = backfill.every((target) => target.pass || target.informational) ? 0 : 1;
