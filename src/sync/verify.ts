import { sql } from "kysely";
import type { SyncedTableName } from "../warehouse/tables.ts";
import type { SyncContext } from "./context.ts";
import type { StreamName } from "./stream.ts";

/**
 * Compares the warehouse with the upstream, per campaign and stream: the
 * upstream's total against the warehouse's live rows plus the records it
 * rejected. Every upstream record must be one or the other.
 */

export interface VerifyRow {
  campaignUid: string | null;
  stream: StreamName;
  upstream: number;
  warehouse: number;
  rejected: number;
  ok: boolean;
}

interface Check {
  stream: StreamName;
  table: SyncedTableName;
  filter: Record<string, string>;
  upstream(): Promise<number>;
}

async function liveRows(ctx: SyncContext, table: SyncedTableName, filter: Record<string, string>): Promise<number> {
  let query = ctx.db.selectFrom(table).select(sql<string>`count(*)`.as("count")).where(sql.ref("_deleted_at"), "is", null);
  for (const [column, value] of Object.entries(filter)) query = query.where(sql.ref(column), "=", value);
  return Number((await query.executeTakeFirst())?.count ?? 0);
}

async function rejectedRecords(ctx: SyncContext, stream: StreamName, campaignUid: string | null): Promise<number> {
  const row = await ctx.db
    .selectFrom("rejected_records")
    .select(sql<string>`count(*)`.as("count"))
    .where("account", "=", ctx.account)
    .where("stream", "=", stream)
    .where("campaign_uid", campaignUid === null ? "is" : "=", campaignUid)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

function accountChecks(ctx: SyncContext): Check[] {
  const account = { _account: ctx.account };
  const total = (resource: "domains" | "contact_lists" | "campaigns") => async () =>
    (await ctx.client.page(resource, { offset: 0, limit: 1 }, ctx.signal)).total;
  return [
    {
      stream: "workspaces",
      table: "workspaces",
      filter: account,
      upstream: async () => {
        const parsed = await ctx.client.listWorkspaces(ctx.signal);
        return parsed.records.length + parsed.rejected.length;
      },
    },
    { stream: "domains", table: "domains", filter: account, upstream: total("domains") },
    { stream: "contact_lists", table: "contact_lists", filter: account, upstream: total("contact_lists") },
    { stream: "campaigns", table: "campaigns", filter: account, upstream: total("campaigns") },
  ];
}

function campaignChecks(ctx: SyncContext, campaignUid: string): Check[] {
  const filter = { campaign_uid: campaignUid };
  const total = (resource: "leads" | "link_clicks" | "email_opens") => async () =>
    (await ctx.client.page(resource, { campaignUid, offset: 0, limit: 1 }, ctx.signal)).total;
  return [
    { stream: "leads", table: "leads", filter, upstream: total("leads") },
    {
      stream: "replies",
      table: "replies",
      filter,
      upstream: async () => {
        const parsed = await ctx.client.listReplies(campaignUid, ctx.signal);
        return parsed.records.length + parsed.rejected.length;
      },
    },
    { stream: "link_clicks", table: "link_clicks", filter, upstream: total("link_clicks") },
    { stream: "email_opens", table: "email_opens", filter, upstream: total("email_opens") },
  ];
}

async function run(ctx: SyncContext, campaignUid: string | null, check: Check): Promise<VerifyRow> {
  const [upstream, warehouse, rejected] = await Promise.all([
    check.upstream(),
    liveRows(ctx, check.table, check.filter),
    rejectedRecords(ctx, check.stream, campaignUid),
  ]);
  return { campaignUid, stream: check.stream, upstream, warehouse, rejected, ok: warehouse + rejected === upstream };
}

export async function verify(ctx: SyncContext, options: { campaignUid?: string } = {}): Promise<VerifyRow[]> {
  const rows: VerifyRow[] = [];
  let campaignUids: string[];
  if (options.campaignUid) {
    campaignUids = [options.campaignUid];
  } else {
    for (const check of accountChecks(ctx)) rows.push(await run(ctx, null, check));
    const campaigns = await ctx.db
      .selectFrom("campaigns")
      .select("uid")
      .where("_account", "=", ctx.account)
      .where("_deleted_at", "is", null)
      .orderBy("uid")
      .execute();
    campaignUids = campaigns.map((campaign) => campaign.uid);
  }
  for (const campaignUid of campaignUids) {
    for (const check of campaignChecks(ctx, campaignUid)) rows.push(await run(ctx, campaignUid, check));
  }
  return rows;
}
