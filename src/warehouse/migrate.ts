import { Migrator, sql } from "kysely";
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
  await refuseNewer(warehouse);
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
  await refuseNewer(warehouse);
  const pending = await pendingMigrations(warehouse);
  if (pending.length > 0) {
    throw new Error(`the warehouse schema "${warehouse.schema}" is missing ${pending.length} migration(s) (${pending.join(", ")}); run \`coldsync migrate\` first`);
  }
}

/**
 * Refuses a warehouse a newer release migrated (a rollback meets it): migrations are forward-only, so this
 * release's statements may not fit what the newer ones made of it. Kysely's own refusal calls such a warehouse
 * corrupted; it is only newer.
 */
async function refuseNewer(warehouse: Warehouse): Promise<void> {
  const { rows: tables } = await sql<{ present: boolean }>`SELECT to_regclass(${`"${warehouse.schema}".kysely_migration`}) IS NOT NULL AS present`.execute(warehouse.db);
  if (tables[0]?.present !== true) return;
  const { rows } = await sql<{ name: string }>`SELECT name FROM ${sql.id(warehouse.schema, "kysely_migration")} ORDER BY name`.execute(warehouse.db);
  const unknown = rows.map((row) => row.name).filter((name) => !(name in migrations));
  if (unknown.length > 0) {
    throw new Error(
      `the warehouse schema "${warehouse.schema}" was migrated by a newer coldsync (${unknown.join(", ")}, unknown to this release); run that release or a later one: migrations are forward-only`,
    );
  }
}
