import type { Insertable } from "kysely";
import type { Database, SyncedColumns } from "./database.ts";

/**
 * The tables a sync writes, each with its natural key: the columns that
 * identify an upstream record. Upserts conflict on them and soft deletes
 * compare them (contract B).
 */
export const NATURAL_KEYS = {
  workspaces: ["id"],
  domains: ["id"],
  contact_lists: ["uid"],
  campaigns: ["uid"],
  campaign_sending_domains: ["campaign_uid", "domain_id"],
  email_sequences: ["id"],
  leads: ["uid"],
  contacts: ["id"],
  schedules: ["id"],
  replies: ["id"],
  link_clicks: ["schedule_id", "link", "clicked_on"],
  email_opens: ["schedule_id", "opened_on"],
} as const satisfies { [T in keyof Database]?: readonly (keyof Database[T] & string)[] };

export type SyncedTableName = keyof typeof NATURAL_KEYS;

export const SYNCED_TABLES = Object.keys(NATURAL_KEYS) as SyncedTableName[];

/** Keys the warehouse generates itself; a sync never writes them. */
type SurrogateKey = "link_click_key" | "email_open_key";

/**
 * One row as a source provides it: the business columns, `_extra` and
 * `_field_issues`, never the bookkeeping timestamps or a surrogate key.
 * Nullable columns are optional, and a column left out is left alone by
 * upsert(): that is how a field that could not be read overwrites nothing.
 */
export type RowInput<T extends SyncedTableName> = Omit<
  Insertable<Database[T]>,
  Exclude<keyof SyncedColumns, "_extra" | "_field_issues"> | SurrogateKey
>;

export type NaturalKeyColumn<T extends SyncedTableName> = (typeof NATURAL_KEYS)[T][number];

/** The natural key of one row, e.g. `{ uid }` or `{ schedule_id, link, clicked_on }`. */
export type NaturalKey<T extends SyncedTableName> = Pick<RowInput<T>, NaturalKeyColumn<T> & keyof RowInput<T>>;

/** Columns upsert() must never be handed, whatever the static types say. */
export const UNWRITABLE_COLUMNS: ReadonlySet<string> = new Set([
  "_synced_at",
  "_first_seen_at",
  "_deleted_at",
  "link_click_key",
  "email_open_key",
] satisfies (keyof SyncedColumns | SurrogateKey)[]);
