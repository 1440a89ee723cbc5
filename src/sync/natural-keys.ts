import { NATURAL_KEYS, type SyncedTableName } from "../warehouse/tables.ts";

/** One text per natural key, the same for a row built from a record and a row read back from the warehouse. */
export function naturalKeyText(table: SyncedTableName, key: Record<string, unknown>): string {
  return NATURAL_KEYS[table]
    .map((column) => {
      const value = key[column];
      return value instanceof Date ? value.toISOString() : String(value);
    })
    .join("|");
}
