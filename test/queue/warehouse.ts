import { openWarehouse, type Warehouse } from "../../src/warehouse/connect.ts";
import { migrateToLatest } from "../../src/warehouse/migrate.ts";

/** The file's test database, opened as the worker opens it, with every migration applied. */
export async function openMigratedWarehouse(databaseUrl: string, schema = "coldsync"): Promise<Warehouse> {
  const warehouse = await openWarehouse({ databaseUrl, dataDir: ".coldsync", schema });
  await migrateToLatest(warehouse);
  return warehouse;
}
