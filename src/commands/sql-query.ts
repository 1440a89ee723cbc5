import type { Config } from "../config.ts";
import { openWarehouse, type QueryRows } from "../warehouse/connect.ts";
import { requireMigrated } from "../warehouse/migrate.ts";
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
    const result = await warehouse.readOnlyQuery(query).catch((error: unknown) => {
      const message = String((error as { message?: unknown }).message);
      throw /multiple commands/.test(message) ? new Error(`one statement at a time (${message})`) : error;
    });
    if (!options.json) console.log(rowsTable(result));
    else if (result.rows.length > 0) console.log(jsonLines(result));
  } finally {
    await warehouse.destroy();
  }
}

function rowsTable({ columns, rows }: QueryRows): string {
  const count = `(${rows.length} ${rows.length === 1 ? "row" : "rows"})`;
  if (columns.length === 0) return count;
  return `${table(columns, rows.map((row) => row.map(cell)))}\n${count}`;
}

/** One object per row; a column name met again (`SELECT a.id, b.id`) is told apart as `id:2`, `id:3`, … */
function jsonLines({ columns, rows }: QueryRows): string {
  const seen = new Map<string, number>();
  const keys = columns.map((column) => {
    const count = (seen.get(column) ?? 0) + 1;
    seen.set(column, count);
    return count === 1 ? column : `${column}:${count}`;
  });
  return rows.map((row) => JSON.stringify(Object.fromEntries(keys.map((key, index) => [key, row[index]])))).join("\n");
}

/** A value in a table: NULL as nothing, JSON as JSON text, everything else as the warehouse wrote it (connect.ts). */
function cell(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "object") return JSON.stringify(value);
  return String(value as string | number | boolean);
}
