import { NATURAL_KEYS, type SyncedTableName } from "../warehouse/tables.ts";

/**
 * One text per natural key, the same for a row built from a record and a row
 * read back from the warehouse. Instants in keys are canonical instant text
 * (src/upstream/instant.ts); a Date read back is written in the same form.
 */
export function naturalKeyText(table: SyncedTableName, key: Record<string, unknown>): string {
  return NATURAL_KEYS[table]
    .map((column) => {
      const value = key[column];
      return value instanceof Date ? `${value.toISOString().slice(0, 23)}000Z` : String(value);
    })
    .join("|");
}
