import { sql } from "kysely";
import type { Config } from "../config.ts";
import { openWarehouse } from "../warehouse/connect.ts";
import { requireMigrated } from "../warehouse/migrate.ts";
import { prepareOnce } from "../warehouse/prepared-statements.ts";
import { table } from "./output.ts";

/**
 * `coldsync sql`: ad-hoc SQL on the warehouse, above all the embedded one, which no other client can open. The
 * query is one statement, run in a read-only transaction that is rolled back: a slip (a DELETE meant for a scratch
 * database) fails instead of changing rows behind the sync's back. It is a guard against accidents, not a
 * boundary: whoever can run coldsync holds the warehouse's credentials anyway.
 */
export async function runQuery(config: Config, query: string, options: { json: boolean }): Promise<void> {
  if (query.trim() === "") throw new Error("no query: give it as the argument, or on standard input");
  const warehouse = await openWarehouse({ ...config.warehouse, createSchema: false });
  try {
    await requireMigrated(warehouse);
    const { rows } = await warehouse.db.connection().execute(async (connection) => {
      await sql`BEGIN READ ONLY`.execute(connection);
      try {
        // A prepared statement holds one command: `COMMIT; DELETE …` is refused whole instead of leaving the
        // read-only transaction (PGlite prepares every query; pg only named ones).
        prepareOnce(query);
        return await sql.raw<Record<string, unknown>>(query).execute(connection);
      } catch (error) {
        const message = String((error as { message?: unknown }).message);
        throw /multiple commands/.test(message) ? new Error(`one statement at a time (${message})`) : error;
      } finally {
        await sql`ROLLBACK`.execute(connection);
      }
    });
    if (!options.json) console.log(rowsTable(rows));
    else if (rows.length > 0) console.log(rows.map((row) => JSON.stringify(row)).join("\n"));
  } finally {
    await warehouse.destroy();
  }
}

function rowsTable(rows: Record<string, unknown>[]): string {
  const first = rows[0];
  const count = `(${rows.length} ${rows.length === 1 ? "row" : "rows"})`;
  if (first === undefined) return count;
  const columns = Object.keys(first);
  return `${table(columns, rows.map((row) => columns.map((column) => cell(row[column]))))}\n${count}`;
}

/** As psql shows a value: NULL as nothing, an instant in ISO form, JSON as JSON text. */
function cell(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "object") return JSON.stringify(value);
  return String(value as string | number | boolean | bigint);
}
