import type { Migration } from "kysely";
import * as syncedTables from "./0001_synced_tables.ts";
import * as syncState from "./0002_sync_state.ts";
import * as history from "./0003_history.ts";
import * as views from "./0004_views.ts";

/**
 * Every migration, by name, in the order they apply. Listed explicitly rather
 * than read from the directory, so the set is fixed at type-check time and
 * needs no file-system access at run time. Migrations are forward-only: a
 * change to a shipped one is a new file here.
 */
export const migrations: Record<string, Migration> = {
  "0001_synced_tables": syncedTables,
  "0002_sync_state": syncState,
  "0003_history": history,
  "0004_views": views,
};
