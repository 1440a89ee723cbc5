import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { openWarehouse, type Warehouse } from "../../src/warehouse/connect.ts";
import { migrateToLatest } from "../../src/warehouse/migrate.ts";
import { useTestDatabase } from "../support/database.ts";

/**
 * The two backends every warehouse suite runs on: PostgreSQL (a database of
 * the file's own) and the embedded PGlite (in a temporary directory).
 */
export interface Backend {
  name: "postgres" | "pglite";
  /** The PostgreSQL database's URL, for tests that need a connection of their own. */
  databaseUrl?: () => string;
  /** A fresh, empty warehouse in `schema`; each call opens a new one. */
  open(schema?: string): Promise<Warehouse>;
}

export function useBackends(label: string): Backend[] {
  const databaseUrl = useTestDatabase(label);
  const directories: string[] = [];
  afterAll(async () => {
    await Promise.all(directories.map((directory) => rm(directory, { recursive: true, force: true })));
  });
  return [
    {
      name: "postgres",
      databaseUrl,
      open: (schema = "coldsync") => openWarehouse({ databaseUrl: databaseUrl(), dataDir: tmpdir(), schema }),
    },
    {
      name: "pglite",
      open: async (schema = "coldsync") => {
        const directory = await mkdtemp(join(tmpdir(), `coldsync-${label}-`));
        directories.push(directory);
        return openWarehouse({ databaseUrl: undefined, dataDir: directory, schema });
      },
    },
  ];
}

/** Opens a migrated warehouse for the enclosing describe block and closes it afterwards. */
export function useMigratedWarehouse(backend: Backend, schema?: string): () => Warehouse {
  let warehouse: Warehouse | undefined;
  beforeAll(async () => {
    warehouse = await backend.open(schema);
    await migrateToLatest(warehouse);
  });
  afterAll(async () => {
    await warehouse?.destroy();
  });
  return () => {
    if (!warehouse) throw new Error("the warehouse exists only inside tests and hooks");
    return warehouse;
  };
}
