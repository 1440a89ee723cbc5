import pg from "pg";

/**
 * A PostgreSQL database of a benchmark run's own, created on an administrator
 * URL of the server and dropped when the run is over, so that a run never
 * touches the user's databases and leaves nothing behind.
 */

export async function withAdmin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** `url` with its database replaced by `database`. */
export function databaseUrlFor(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export interface ScratchDatabase {
  name: string;
  url: string;
  /** Drops the database, closing whatever is still connected to it. */
  drop(): Promise<void>;
}

/** Creates `name` on the server of `adminUrl`; a lower-case SQL identifier, so it needs no quoting rules of its own. */
export async function createScratchDatabase(adminUrl: string, name: string): Promise<ScratchDatabase> {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`scratch database name "${name}" is not a lower-case SQL identifier`);
  await withAdmin(adminUrl, (client) => client.query(`CREATE DATABASE "${name}"`));
  return {
    name,
    url: databaseUrlFor(adminUrl, name),
    drop: async () => {
      await withAdmin(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    },
  };
}
