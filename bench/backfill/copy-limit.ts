import { availableParallelism } from "node:os";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { NATURAL_KEYS, type SyncedTableName } from "../../src/warehouse/tables.ts";
import { answerRows } from "./normalized-rows.ts";

/**
 * The database's own limit: the same normalized rows COPY'd into the same
 * migrated tables (same indexes, triggers and session settings as the sync),
 * one COPY per table, as many tables at once as there are cores. The rows are
 * prepared first, untimed: one per natural key (a later copy of a record
 * fills in the columns it carries, as the upsert merges sources), encoded in
 * COPY's text format. What is timed is the database loading them.
 */

const CHUNK_ROWS = 2_000;
const SESSION = "-c synchronous_commit=off";

/** PostgreSQL's text COPY format: \N for NULL, backslash escapes; jsonb as its JSON text. */
function copyField(value: unknown): string {
  if (value === null || value === undefined) return "\\N";
  if (value instanceof Date) return value.toISOString();
  const text = typeof value === "object" ? JSON.stringify(value) : String(value);
  return text.replace(/\\/g, "\\\\").replace(/\t/g, "\\t").replace(/\n/g, "\\n").replace(/\r/g, "\\r");
}

interface TableLoad {
  table: SyncedTableName;
  columns: string[];
  chunks: string[];
  rows: number;
}

async function prepare(answersFile: string, account: string, stamp: string): Promise<TableLoad[]> {
  const tables = new Map<SyncedTableName, Map<string, Record<string, unknown>>>();
  for await (const { batch } of answerRows(answersFile, account)) {
    for (const [table, rows] of Object.entries(batch) as [SyncedTableName, Record<string, unknown>[]][]) {
      let byKey = tables.get(table);
      if (byKey === undefined) tables.set(table, (byKey = new Map()));
      for (const row of rows) {
        const key = NATURAL_KEYS[table].map((column) => String(row[column])).join("\u0000");
        const defined = Object.fromEntries(Object.entries(row).filter(([, value]) => value !== undefined));
        byKey.set(key, { ...byKey.get(key), ...defined, ...(table === "campaigns" ? { _observed_at: stamp } : {}) });
      }
    }
  }
  return [...tables].map(([table, byKey]) => {
    const rows = [...byKey.values()];
    const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
    const chunks: string[] = [];
    for (let start = 0; start < rows.length; start += CHUNK_ROWS) {
      let text = "";
      for (const row of rows.slice(start, start + CHUNK_ROWS)) text += `${columns.map((column) => copyField(row[column])).join("\t")}\t${stamp}\t${stamp}\n`;
      chunks.push(text);
    }
    return { table, columns, chunks, rows: rows.length };
  });
}

const quoted = (column: string) => `"${column}"`;

async function copyTable(client: pg.Client, load: TableLoad): Promise<void> {
  const target = client.query(copyFrom(`COPY ${load.table} (${load.columns.map(quoted).join(", ")}, _synced_at, _first_seen_at) FROM STDIN`));
  await pipeline(Readable.from(load.chunks), target);
}

/**
 * Loads the rows into `schema` (already migrated and empty); returns the rows loaded and the seconds the loading
 * took, from when `beforeClock` resolved (the rows prepared and the connections open).
 */
export async function copyLimit(
  databaseUrl: string,
  schema: string,
  answersFile: string,
  account: string,
  beforeClock: () => Promise<void>,
): Promise<{ rows: number; seconds: number }> {
  const loads = (await prepare(answersFile, account, new Date().toISOString())).sort((a, b) => b.rows - a.rows);
  const clients = Array.from({ length: Math.min(availableParallelism(), loads.length) }, () => new pg.Client({ connectionString: databaseUrl, options: `-c search_path=${schema} ${SESSION}` }));
  await Promise.all(clients.map((client) => client.connect()));
  try {
    await beforeClock();
    const started = performance.now();
    let next = 0;
    await Promise.all(
      clients.map(async (client) => {
        while (next < loads.length) await copyTable(client, loads[next++] as TableLoad);
      }),
    );
    return { rows: loads.reduce((sum, load) => sum + load.rows, 0), seconds: (performance.now() - started) / 1000 };
  } finally {
    await Promise.all(clients.map((client) => client.end()));
  }
}
