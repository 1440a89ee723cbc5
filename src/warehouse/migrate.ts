import { Migrator } from "kysely";
import { migrations } from "../../migrations/index.ts";
import { schemaExists, type Warehouse } from "./connect.ts";

function migratorFor(warehouse: Warehouse): Migrator {
  return new Migrator({
    db: warehouse.db,
    provider: { getMigrations: async () => migrations },
    migrationTableSchema: warehouse.schema,
  });
}

/**
 * Applies every pending migration, in order, in one transaction; safe to run
 * again and from several processes at once. On PostgreSQL, Kysely holds an
 * advisory lock on a dedicated connection for the whole run. On PGlite that
 * lock would not exclude anyone (a single session re-enters its own advisory
 * locks), but the dialect hands out its one connection to one holder at a
 * time, and the migrator keeps it for the whole run, so concurrent callers queue.
 */
export async function migrateToLatest(warehouse: Warehouse): Promise<{ applied: string[] }> {
  const { error, results = [] } = await migratorFor(warehouse).migrateToLatest();
  const failed = results.find((result) => result.status === "Error");
  if (error !== undefined || failed !== undefined) {
    const cause = error instanceof Error ? error.message : String(error ?? "rolled back");
    throw new Error(`migration ${failed?.migrationName ?? "setup"} failed: ${cause}`, { cause: error });
  }
  return { applied: results.map((result) => result.migrationName) };
}

/** Names of the migrations not yet applied to the warehouse, in order. */
async function pendingMigrations(warehouse: Warehouse): Promise<string[]> {
  const known = await migratorFor(warehouse).getMigrations();
  return known.filter((migration) => migration.executedAt === undefined).map((migration) => migration.name);
}

/**
 * Refuses a warehouse that lacks migrations, for the commands that do not
 * apply them: their queries would otherwise fail on the first missing table
 * or column with a raw SQL error that does not say what to do.
 */
export async function requireMigrated(warehouse: Warehouse): Promise<void> {
  if (!(await schemaExists(warehouse.db, warehouse.schema))) {
    throw new Error(`the warehouse schema "${warehouse.schema}" does not exist (COLDSYNC_SCHEMA); run \`coldsync migrate\` first`);
  }
  const pending = await pendingMigrations(warehouse);
  if (pending.length > 0) {
    throw new Error(`the warehouse schema "${warehouse.schema}" is missing ${pending.length} migration(s) (${pending.join(", ")}); run \`coldsync migrate\` first`);
  }
}
