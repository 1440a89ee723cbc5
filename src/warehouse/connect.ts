import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { Kysely, PostgresDialect, sql, type KyselyConfig } from "kysely";
import pg from "pg";
import { addStageMs, stageTimingsEnabled } from "../stage-timings.ts";
import type { Database } from "./database.ts";
import { namePreparedStatements } from "./prepared-statements.ts";
import { AdvisoryLocks, InProcessLocks, type RunLocks } from "./run-locks.ts";

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
  /** One campaign synced by one process at a time (run-locks.ts). */
  locks: RunLocks;
  /**
   * One statement of ad-hoc SQL (`coldsync sql`) in a read-only transaction that is rolled back, its columns in
   * order (names may repeat) and its values in PostgreSQL's own text but for booleans, 2- and 4-byte integers,
   * oids and JSON (PARSED_TYPES).
   */
  readOnlyQuery(text: string): Promise<QueryRows>;
  destroy(): Promise<void>;
}

export interface QueryRows {
  columns: string[];
  rows: unknown[][];
}

export interface WarehouseSettings {
  databaseUrl: string | undefined;
  dataDir: string;
  schema: string;
  /**
   * Whether opening creates the schema when it is missing (default): the commands that migrate do; the ones that only
   * read a migrated warehouse (status, verify, the worker) must not leave an empty schema behind a mistyped name.
   */
  createSchema?: boolean;
  /** Told when a connection to PostgreSQL breaks (a restart, a failover, a terminated backend). */
  onConnectionError?: (error: Error) => void;
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
  [INT8_OID]: (value: string) => Number(value),
  [NUMERIC_OID]: (value: string) => Number(value),
  [DATE_OID]: (value: string) => value,
};

/**
 * Ad-hoc queries read every value in PostgreSQL's own text (a bigint past 2^53 and a wide numeric exactly, an
 * instant with its microseconds in the session's time zone, an interval, an array or bytes as psql shows them),
 * but for the types JavaScript holds exactly: booleans, 2- and 4-byte integers, oids, JSON.
 */
const PARSED_TYPES = new Set([16 /* bool */, 21 /* int2 */, 23 /* int4 */, 26 /* oid */, 114 /* json */, 3802 /* jsonb */]);
const asText = (value: string) => value;
const exactPgTypes = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    return PARSED_TYPES.has(oid) ? pg.types.getTypeParser(oid, format) : asText;
  },
} as pg.CustomTypesConfig;

/** Ad-hoc queries run so far: each is prepared under a name of its own. */
let adHocQueries = 0;

export async function openWarehouse(settings: WarehouseSettings): Promise<Warehouse> {
  if (!SCHEMA_NAME.test(settings.schema)) throw new Error(`warehouse schema "${settings.schema}" is not a lower-case SQL identifier`);
  const create = settings.createSchema ?? true;
  return settings.databaseUrl === undefined
    ? openPglite(join(settings.dataDir, "pglite"), settings.schema, create)
    : openPostgres(settings.databaseUrl, settings.schema, create, settings.onConnectionError ?? (() => undefined));
}

/**
 * synchronous_commit=off: a sync commits once per page, and waiting for each
 * commit's WAL flush made page-sized writes about 1.7x slower. A crash can lose
 * the last fraction of a second of commits, never half of one; since a page's
 * rows and its checkpoint commit together, the next run simply fetches that
 * page again.
 *
 * jit=off: the sync's statements are short and many; JIT compiling one (done
 * when its estimated cost passes jit_above_cost, which a bulk load's stale
 * statistics make easy) cost more than a second where the query itself takes
 * under 100 ms, which made the database the large backfill's bottleneck.
 */
const SESSION_SETTINGS = "-c synchronous_commit=off -c jit=off";

/**
 * The connection string without its `options` parameter, and the session options: the URL's own (a
 * statement_timeout, a pooler's endpoint) and then the warehouse's, which win where both set one. node-postgres
 * takes a URL's `options` over the pool's, so that every table would otherwise land outside the schema.
 */
function sessionOptions(databaseUrl: string, schema: string): { connectionString: string; options: string } {
  const ours = `-c search_path=${schema} ${SESSION_SETTINGS}`;
  const url = new URL(databaseUrl);
  const given = url.searchParams.get("options");
  if (given === null) return { connectionString: databaseUrl, options: ours };
  url.searchParams.delete("options");
  return { connectionString: url.href, options: `${given} ${ours}` };
}

async function openPostgres(databaseUrl: string, schema: string, create: boolean, onConnectionError: (error: Error) => void): Promise<Warehouse> {
  const pool = new pg.Pool({ ...sessionOptions(databaseUrl, schema), types: pgTypes });
  // A client that loses its server emits 'error': the pool listens on idle clients (and drops them, so
  // the next query reconnects), but nothing listens on a client while it is checked out, and an
  // unhandled 'error' event ends the process. The query in flight fails on its own (its transaction
  // rolls back whole); a broken client is not queryable, so the pool replaces it.
  pool.on("error", onConnectionError);
  pool.on("connect", (client) => {
    client.on("error", onConnectionError);
    namePreparedStatements(client);
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), ...queryTimings() });
  try {
    if (create) await ensureSchema(db, schema);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  const readOnlyQuery = async (text: string): Promise<QueryRows> => {
    const client = await pool.connect();
    try {
      await client.query("BEGIN READ ONLY");
      try {
        // A named statement goes by the extended protocol, which takes one statement: `COMMIT; DELETE …` is refused whole.
        adHocQueries += 1;
        const result = await client.query<unknown[]>({ name: `coldsync_ad_hoc_${adHocQueries}`, text, rowMode: "array", types: exactPgTypes });
        return { columns: result.fields.map((field) => field.name), rows: result.rows };
      } finally {
        await client.query("ROLLBACK");
      }
    } finally {
      client.release();
    }
  };
  return { db, schema, kind: "postgres", locks: new AdvisoryLocks(databaseUrl, schema, onConnectionError), readOnlyQuery, destroy: () => db.destroy() };
}

/** PGlite takes parsers by type, so every type but PARSED_TYPES gets the text one (PGlite parses arrays, dates, bytes). */
async function exactPgliteParsers(pglite: { query<T>(text: string): Promise<{ rows: T[] }> }): Promise<Record<number, (value: string) => string>> {
  const { rows } = await pglite.query<{ oid: number }>("SELECT oid::int AS oid FROM pg_type");
  return Object.fromEntries(rows.filter(({ oid }) => !PARSED_TYPES.has(oid)).map(({ oid }) => [oid, asText]));
}

async function openPglite(directory: string, schema: string, create: boolean): Promise<Warehouse> {
  // Loaded only when the embedded warehouse is used: they are a third of a PostgreSQL user's start-up otherwise.
  const [{ PGlite }, { PGliteDialect }] = await Promise.all([import("@electric-sql/pglite"), import("kysely-pglite-dialect")]);
  // A command that creates nothing (status, verify) refuses a directory that holds no embedded warehouse: PGlite would
  // create a whole cluster in a mistyped COLDSYNC_DATA_DIR.
  if (!create && !existsSync(join(directory, "PG_VERSION"))) {
    throw new Error(`no embedded warehouse in ${directory} (COLDSYNC_DATA_DIR, or set DATABASE_URL); run \`coldsync migrate\` first`);
  }
  await mkdir(directory, { recursive: true });
  const release = await holdDataDirectory(directory);
  try {
    const pglite = await PGlite.create(directory, { parsers: pgliteParsers });
    // PGlite is one session: setting search_path once covers every later query.
    // Quoted: a name COLDSYNC_SCHEMA allows may be a reserved word (`user`, `order`).
    await pglite.exec(`${create ? `CREATE SCHEMA IF NOT EXISTS "${schema}"; ` : ""}SET search_path TO "${schema}";`);
    const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite), ...queryTimings() });
    const destroy = async () => {
      await db.destroy();
      await release();
    };
    // Read once: a type made later (by a migration) has no parser of PGlite's either, and so comes as text anyway.
    let parsers: ReturnType<typeof exactPgliteParsers> | undefined;
    const readOnlyQuery = async (text: string): Promise<QueryRows> => {
      parsers ??= exactPgliteParsers(pglite);
      await pglite.exec("BEGIN READ ONLY");
      try {
        // PGlite sends a query with the extended protocol, which takes one statement.
        const result = await pglite.query<unknown[]>(text, [], { rowMode: "array", parsers: await parsers });
        return { columns: result.fields.map((field) => field.name), rows: result.rows };
      } finally {
        await pglite.exec("ROLLBACK");
      }
    };
    return { db, schema, kind: "pglite", locks: new InProcessLocks(), readOnlyQuery, destroy };
  } catch (error) {
    await release();
    throw error;
  }
}

/**
 * The embedded warehouse is one process's: PGlite runs PostgreSQL inside the process, and two processes writing
 * one directory (three `migrate` at once, `demo --serve` and a `status` beside it) corrupt it. A lock file held
 * while the warehouse is open (refreshed in the background, stale 10 s after a crash) makes the second one stop,
 * by name.
 */
async function holdDataDirectory(directory: string): Promise<() => Promise<void>> {
  const { lock } = await import("proper-lockfile");
  try {
    return await lock(directory, { realpath: false });
  } catch (error) {
    if ((error as { code?: unknown }).code !== "ELOCKED") throw error;
    throw new Error(`the embedded warehouse in ${directory} is open in another coldsync process (COLDSYNC_DATA_DIR): one process at a time, or set DATABASE_URL to share a PostgreSQL warehouse`);
  }
}

/** The benchmark's database time: every query's duration as Kysely measures it; no hook at all otherwise. */
function queryTimings(): Pick<KyselyConfig, "log"> {
  return stageTimingsEnabled() ? { log: (event) => addStageMs("database", event.queryDurationMillis) } : {};
}

/** Whether PostgreSQL at `databaseUrl` accepts a connection and answers, on a connection of its own (the pool stays untouched). */
export async function reachPostgres(databaseUrl: string, timeoutMs = 5_000): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: timeoutMs, application_name: "coldsync-probe" });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.query("SELECT 1");
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function schemaExists(db: Kysely<Database>, schema: string): Promise<boolean> {
  const { rows } = await sql<{ found: boolean }>`SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = ${schema}) AS found`.execute(db);
  return rows[0]?.found === true;
}

/** Two processes may create the schema at once; IF NOT EXISTS alone does not settle that race in PostgreSQL. */
async function ensureSchema(db: Kysely<Database>, schema: string): Promise<void> {
  if (await schemaExists(db, schema)) return;
  try {
    await sql`CREATE SCHEMA IF NOT EXISTS ${sql.id(schema)}`.execute(db);
  } catch (error) {
    if (!(await schemaExists(db, schema))) throw error;
  }
}
