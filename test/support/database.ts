import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, inject } from "vitest";

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function onAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: inject("services").databaseUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A database of its own for one test file, so files can run in parallel; dropped afterwards. */
export async function createTestDatabase(label = "t"): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `coldsync_${label.replace(/[^a-z0-9_]/gi, "_").toLowerCase()}_${randomBytes(4).toString("hex")}`;
  await onAdmin((client) => client.query(`CREATE DATABASE "${name}"`));
  return {
    url: withDatabase(inject("services").databaseUrl, name),
    drop: () => onAdmin((client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => undefined),
  };
}

/** Registers beforeAll/afterAll hooks and returns a getter for the file's database URL. */
export function useTestDatabase(label?: string): () => string {
  let current: { url: string; drop: () => Promise<void> } | undefined;
  beforeAll(async () => {
    current = await createTestDatabase(label);
  });
  afterAll(async () => {
    await current?.drop();
  });
  return () => {
    if (!current) throw new Error("the test database exists only inside tests and hooks");
    return current.url;
  };
}
