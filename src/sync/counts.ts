import { sql, type Kysely } from "kysely";
import type { Database } from "../warehouse/database.ts";
import type { SyncedTableName } from "../warehouse/tables.ts";
import type { SyncContext } from "./context.ts";
import type { PagedStream, StreamScope } from "./stream.ts";

/**
 * What the warehouse holds of one stream, to compare with the upstream's
 * total: its live rows, and the records of it that could not be placed and
 * are still met (not resolved). Every upstream record must be one or the other.
 */

/** A paged listing's total as the upstream answers it now, for the price of one record; null when it announces none usable. */
export async function listingTotal(ctx: SyncContext, stream: PagedStream<unknown>, scope: StreamScope): Promise<number | null> {
  const page = await ctx.client.page(stream.resource, { campaignUid: scope.campaignUid ?? undefined, offset: 0, limit: 1 }, ctx.signal);
  return page.total;
}

export async function liveRows(db: Kysely<Database>, table: SyncedTableName, filter: Record<string, string>): Promise<number> {
  let query = db.selectFrom(table).select(sql<string>`count(*)`.as("count")).where(sql.ref("_deleted_at"), "is", null);
  for (const [column, value] of Object.entries(filter)) query = query.where(sql.ref(column), "=", value);
  return Number((await query.executeTakeFirst())?.count ?? 0);
}

/** Rejected top-level records (not parts of records) of a stream and scope that are still met. */
export async function currentRejected(db: Kysely<Database>, account: string, stream: string, campaignUid: string | null): Promise<number> {
  const row = await db
    .selectFrom("rejected_records")
    .select(sql<string>`count(*)`.as("count"))
    .where("account", "=", account)
    .where("stream", "=", stream)
    .where("campaign_uid", campaignUid === null ? "is" : "=", campaignUid)
    .where("parent_key", "is", null)
    .where("resolved_at", "is", null)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}
