import pg from "pg";
import { NATURAL_KEYS, type SyncedTableName } from "../../src/warehouse/tables.ts";
import { answerRows } from "./normalized-rows.ts";

/**
 * What a user would write instead of coldsync: for each answer, map its
 * records, then one INSERT … ON CONFLICT DO UPDATE per row, each its own
 * statement on one connection, autocommitted. It gets the sync's own row
 * mapping and session settings (synchronous_commit=off), and its fetching is
 * not counted: it loads the answers the fetch-only walk saved, so the figure
 * is a floor under what such a script takes.
 */

const SESSION = "-c synchronous_commit=off";

function statementFor(table: SyncedTableName, columns: readonly string[]): string {
  const key: readonly string[] = NATURAL_KEYS[table];
  const quoted = (column: string) => `"${column}"`;
  const values = columns.map((_, index) => `$${index + 1}`);
  const updates = [...columns.filter((column) => !key.includes(column)).map((column) => `${quoted(column)} = EXCLUDED.${quoted(column)}`), "_synced_at = now()"];
  return `INSERT INTO ${table} (${columns.map(quoted).join(", ")}, _synced_at, _first_seen_at) VALUES (${values.join(", ")}, now(), now())
          ON CONFLICT (${key.map(quoted).join(", ")}) DO UPDATE SET ${updates.join(", ")}`;
}

/** jsonb values travel as JSON text (the driver would send a JavaScript array as a PostgreSQL array). */
const parameter = (value: unknown) => (value !== null && typeof value === "object" && !(value instanceof Date) ? JSON.stringify(value) : value);

export async function naiveScript(databaseUrl: string, schema: string, answersFile: string, account: string): Promise<{ records: number; rows: number }> {
  const client = new pg.Client({ connectionString: databaseUrl, options: `-c search_path=${schema} ${SESSION}` });
  await client.connect();
  let records = 0;
  let rows = 0;
  try {
    for await (const answer of answerRows(answersFile, account)) {
      records += answer.records;
      for (const [table, tableRows] of Object.entries(answer.batch) as [SyncedTableName, Record<string, unknown>[]][]) {
        for (const row of tableRows) {
          const columns = Object.keys(row).filter((column) => row[column] !== undefined);
          await client.query(statementFor(table, columns), columns.map((column) => parameter(row[column])));
          rows += 1;
        }
      }
    }
  } finally {
    await client.end();
  }
  return { records, rows };
}
