import type { SyncContext } from "./context.ts";
import { liveRows, rejectedRecords } from "./counts.ts";
import type { StreamDefinition, StreamName, StreamScope } from "./stream.ts";
import { ACCOUNT_STREAMS, CAMPAIGN_STREAMS } from "./streams/index.ts";

/**
 * Compares the warehouse with the upstream, per campaign and stream: the
 * upstream's total against the warehouse's live rows plus the records it
 * rejected. Every upstream record must be one or the other. The checks are
 * the streams' own completeness rules, so a new stream is verified too.
 */

export interface VerifyRow {
  campaignUid: string | null;
  stream: StreamName;
  upstream: number;
  warehouse: number;
  rejected: number;
  ok: boolean;
}

/** The upstream's count of a stream's records, for the streams that have one (listings, not lookups). */
async function upstreamCount(ctx: SyncContext, stream: StreamDefinition, scope: StreamScope): Promise<number> {
  if (stream.kind === "paged") {
    const page = await ctx.client.page(stream.resource, { campaignUid: scope.campaignUid ?? undefined, offset: 0, limit: 1 }, ctx.signal);
    return page.total;
  }
  if (stream.kind === "list") {
    const parsed = await stream.fetch(ctx.client, scope, ctx.signal);
    return parsed.records.length + parsed.rejected.length;
  }
  throw new TypeError(`${stream.name} has no listing to count`);
}

async function check(ctx: SyncContext, stream: StreamDefinition, scope: StreamScope): Promise<VerifyRow | undefined> {
  if (!stream.completeness || stream.kind === "lookup") return undefined;
  const [upstream, warehouse, rejected] = await Promise.all([
    upstreamCount(ctx, stream, scope),
    liveRows(ctx.db, stream.completeness.table, stream.completeness.within(scope)),
    rejectedRecords(ctx.db, ctx.account, stream.name, scope.campaignUid),
  ]);
  return { campaignUid: scope.campaignUid, stream: stream.name, upstream, warehouse, rejected, ok: warehouse + rejected === upstream };
}

async function checkAll(ctx: SyncContext, streams: readonly StreamDefinition[], scope: StreamScope, into: VerifyRow[]): Promise<void> {
  for (const stream of streams) {
    const row = await check(ctx, stream, scope);
    if (row) into.push(row);
  }
}

export async function verify(ctx: SyncContext, options: { campaignUid?: string } = {}): Promise<VerifyRow[]> {
  const rows: VerifyRow[] = [];
  let campaignUids: string[];
  if (options.campaignUid) {
    campaignUids = [options.campaignUid];
  } else {
    await checkAll(ctx, ACCOUNT_STREAMS, { account: ctx.account, campaignUid: null }, rows);
    const campaigns = await ctx.db
      .selectFrom("campaigns")
      .select("uid")
      .where("_account", "=", ctx.account)
      .where("_deleted_at", "is", null)
      .orderBy("uid")
      .execute();
    campaignUids = campaigns.map((campaign) => campaign.uid);
  }
  for (const campaignUid of campaignUids) await checkAll(ctx, CAMPAIGN_STREAMS, { account: ctx.account, campaignUid }, rows);
  return rows;
}
