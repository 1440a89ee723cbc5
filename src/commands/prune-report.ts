import type { Config } from "../config.ts";
import { pruneRunLog } from "../sync/retention.ts";
import { openWarehouse } from "../warehouse/connect.ts";
import { requireMigrated } from "../warehouse/migrate.ts";

/** `coldsync prune`'s work: one line saying what went (or, with `dryRun`, what would). */
export async function runPrune(config: Config, before: Date, dryRun: boolean): Promise<void> {
  const warehouse = await openWarehouse({ ...config.warehouse, createSchema: false });
  try {
    await requireMigrated(warehouse);
    const pruned = await pruneRunLog(warehouse.db, config.account, before, { dryRun });
    const what = `${pruned.syncRuns} sync run(s) and ${pruned.verifications} verification(s) of account ${config.account} that finished before ${before.toISOString()}`;
    console.log(dryRun ? `would delete ${what} (dry run: nothing deleted)` : `deleted ${what}`);
  } finally {
    await warehouse.destroy();
  }
}
