import pg from "pg";

/**
 * A database of its own on a PostgreSQL server, for one test file or one
 * benchmark run: created under a name of the caller's choosing, addressed by
 * the server's URL with that name, and dropped (closing whatever still holds
 * it) when the caller is done.
 */

export interface ScratchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** `serverUrl` pointing at database `name`. */
export function databaseUrl(serverUrl: string, name: string): string {
  const parsed = new URL(serverUrl);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/** Runs `work` on a connection of its own to `serverUrl`, closed afterwards. */
export async function onServer<T>(serverUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export async function createScratchDatabase(serverUrl: string, name: string): Promise<ScratchDatabase> {
  const quoted = pg.escapeIdentifier(name);
  await onServer(serverUrl, (client) => client.query(`CREATE DATABASE ${quoted}`));
  return {
    name,
    url: databaseUrl(serverUrl, name),
    drop: async () => {
      await onServer(serverUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${quoted} WITH (FORCE)`));
    },
  };
}
