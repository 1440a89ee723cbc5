import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { PGlite, types as pgliteTypes } from "@electric-sql/pglite";
import { Kysely, PostgresDialect, sql } from "kysely";
import { PGliteDialect } from "kysely-pglite-dialect";
import pg from "pg";
import type { Database } from "./database.ts";

/**
 * Opens the warehouse: PostgreSQL when a URL is given, otherwise the embedded
 * PGlite under the data directory. Every connection's search_path is the
 * warehouse schema, so unqualified names in queries, views and triggers all
 * land there.
 */

export interface Warehouse {
  db: Kysely<Database>;
  schema: string;
  kind: "postgres" | "pglite";
  destroy(): Promise<void>;
}

export interface WarehouseSettings {
  databaseUrl: string | undefined;
  dataDir: string;
  schema: string;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

const INT8_OID = 20;
const NUMERIC_OID = 1700;
const DATE_OID = 1082;

/**
 * Both backends read bigint and numeric as numbers (ids, counts and 4-place
 * rates fit a double) and dates as 'YYYY-MM-DD' (a Date would shift the UTC day
 * into the local time zone), so callers see one shape whichever backend runs.
 */
const pgTypes = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === INT8_OID || oid === NUMERIC_OID) return (value: string) => Number(value);
    if (oid === DATE_OID) return (value: string) => value;
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

const pgliteParsers = {
  [pgliteTypes.INT8]: (value: string) => Number(value),
  [pgliteTypes.NUMERIC]: (value: string) => Number(value),
  [pgliteTypes.DATE]: (value: string) => value,
};

export async function openWarehouse(settings: WarehouseSettings): Promise<Warehouse> {
  if (!SCHEMA_NAME.test(settings.schema)) throw new Error(`warehouse schema "${settings.schema}" is not a lower-case SQL identifier`);
  return settings.databaseUrl === undefined
    ? openPglite(join(settings.dataDir, "pglite"), settings.schema)
    : openPostgres(settings.databaseUrl, settings.schema);
}

/**
 * synchronous_commit=off: a sync commits once per page, and waiting for each
 * commit's WAL flush made page-sized writes about 1.7x slower. A crash can lose
 * the last fraction of a second of commits, never half of one; since a page's
 * rows and its checkpoint commit together, the next run simply fetches that
 * page again.
 */
const SESSION_SETTINGS = "-c synchronous_commit=off";

async function openPostgres(databaseUrl: string, schema: string): Promise<Warehouse> {
  const pool = new pg.Pool({ connectionString: databaseUrl, options: `-c search_path=${schema} ${SESSION_SETTINGS}`, types: pgTypes });
  // An idle client that loses its server is dropped by the pool and the next query
  // reconnects; without a listener the event would crash the process.
  pool.on("error", () => undefined);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  try {
    await ensureSchema(db, schema);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return { db, schema, kind: "postgres", destroy: () => db.destroy() };
}

async function openPglite(directory: string, schema: string): Promise<Warehouse> {
  await mkdir(directory, { recursive: true });
  const pglite = await PGlite.create(directory, { parsers: pgliteParsers });
  // PGlite is one session: setting search_path once covers every later query.
  await pglite.exec(`CREATE SCHEMA IF NOT EXISTS ${schema}; SET search_path TO ${schema};`);
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  return { db, schema, kind: "pglite", destroy: () => db.destroy() };
}

/** Two processes may create the schema at once; IF NOT EXISTS alone does not settle that race in PostgreSQL. */
async function ensureSchema(db: Kysely<Database>, schema: string): Promise<void> {
  const exists = () => sql<{ found: boolean }>`SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = ${schema}) AS found`.execute(db);
  if ((await exists()).rows[0]?.found) return;
  try {
    await sql`CREATE SCHEMA IF NOT EXISTS ${sql.id(schema)}`.execute(db);
  } catch (error) {
    if (!(await exists()).rows[0]?.found) throw error;
  }
}
