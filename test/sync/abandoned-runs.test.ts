import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeAbandonedRuns } from "../../src/sync/run-ledger.ts";
import { openWarehouse, type Warehouse } from "../../src/warehouse/connect.ts";
import { migrateToLatest } from "../../src/warehouse/migrate.ts";
import type { RunLocks } from "../../src/warehouse/run-locks.ts";
import { useTestDatabase } from "../support/database.ts";

/** closeAbandonedRuns, against sweeps and runs that end while it looks. */

const databaseUrl = useTestDatabase("abandoned_runs");
let warehouse: Warehouse;

beforeAll(async () => {
  warehouse = await openWarehouse({ databaseUrl: databaseUrl(), dataDir: ".coldsync", schema: "abandoned_runs" });
  await migrateToLatest(warehouse);
});
afterAll(async () => {
  await warehouse.destroy();
});

describe("closeAbandonedRuns", () => {
  it("counts the runs it closed, not one that finished while it looked at their locks", async () => {
    const { db } = warehouse;
    const { id } = await db
      .insertInto("sync_runs")
      .values({ account: "sweep", scope: "c", trigger: "worker", started_at: new Date(), outcome: "running", holder: "coldsync:run:finishing" })
      .returning("id")
      .executeTakeFirstOrThrow();
    // The run finishes (its row updated, then its lock released) between the sweep's read of running rows and its look at their locks.
    const locks: RunLocks = {
      acquire: async () => null,
      held: async () => {
        await db.updateTable("sync_runs").set({ outcome: "succeeded", finished_at: new Date() }).where("id", "=", id).execute();
        return new Set();
      },
    };
    expect(await closeAbandonedRuns(db, locks, "sweep")).toBe(0);
    expect((await db.selectFrom("sync_runs").select("outcome").where("id", "=", id).executeTakeFirstOrThrow()).outcome).toBe("succeeded");
  });
});
