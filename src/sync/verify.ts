import type { Kysely } from "kysely";
import type { Database } from "../warehouse/database.ts";
import type { SyncedTableName } from "../warehouse/tables.ts";
import type { SyncContext } from "./context.ts";
import { currentRejected, liveRows } from "./counts.ts";
import { keyList, type KeyList } from "./key-list.ts";
import { keyRows } from "./natural-keys.ts";
import { loadCheckpoint } from "./checkpoints.ts";
import { checkpointKey } from "./stream-run.ts";
import { recordVerification } from "./verifications.ts";
import { campaignScopeLine } from "./verify-campaign.ts";
import { ShortListingError } from "./run-list.ts";
import { IncompleteWalkError } from "./run-paged.ts";
import { upstreamKeys, upstreamTotal, type ListedKeys, type ListedSchedules } from "./verify-listings.ts";
import { historyLines } from "./verify-history.ts";
import { orphanLines } from "./verify-orphans.ts";
import { walkedScheduleLines } from "./verify-schedules.ts";
import { compareCampaignDetail, ScopeValues } from "./verify-values.ts";
import type { ListStream, PagedStream, StreamScope } from "./stream.ts";
import { ACCOUNT_STREAMS, leads, linkClicks, emailOpens, replies } from "./streams/index.ts";

/**
 * Reconciles the warehouse with the upstream (`coldsync verify`).
 *
 * - Account level (workspaces, domains, contact lists, campaigns: cheap
 *   listings): the key sets are compared, and the missing and extra keys named.
 * - Per campaign, for every campaign the upstream lists or the warehouse holds:
 *   the upstream's totals of leads, clicks and opens against the warehouse's
 *   live rows plus the records of it still rejected (by key set instead where
 *   the sync's last proof saw a page repeat a record: the total counts such
 *   copies); its replies, whose listing is read whole, by key set. A campaign
 *   the warehouse does not hold at all (a listing item it could not place)
 *   is read below: its leads are walked and compared by
 *   key, so are its schedules, and each child stream is reported with the
 *   upstream's count.
 * - `deep` compares key sets of leads and events too, for the campaigns whose
 *   counts disagree (or all of them), and the schedules the walk of their
 *   leads lists against the live ones (a schedule wrongly held as deleted
 *   changes no count of a listing), and the email sequences those send
 *   (verify-schedules.ts).
 * - Live rows under a campaign the warehouse holds as deleted (and the upstream does not list) are extra, and
 *   so are live contacts no live lead holds; retired contacts a live lead holds are missing (verify-orphans.ts).
 * - Every live workspace, domain and campaign has one open history row that holds its current values
 *   (verify-history.ts: a line only where one does not).
 * - Every record still rejected is its own line, with its reason.
 * - `values` compares the values of the rows the records read above map to,
 *   and of each campaign's detail, and names those not held live (verify-values.ts).
 *
 * Without `deep`, verification reads listings, totals and the replies of each
 * campaign, never a lead walk, except for campaigns the warehouse lacks.
 *
 * A campaign the upstream no longer knows answers 404 to its listings: it
 * holds nothing upstream, so what the warehouse still holds of it is extra.
 * A campaign named by `campaignUid` gets a line of its own, from its detail
 * (verify-campaign.ts); one that neither side knows is no such campaign (a
 * typo): an `unknown` line, and its listings are not read.
 * Key sets are read with the sync's healing walk (walk.ts), so that a record
 * that goes while a listing is read does not shift another past the cursor
 * and have it reported extra.
 */

export type CheckStatus = "ok" | "missing" | "extra" | "rejected" | "differs" | "unknown";

export interface VerifyLine {
  /** Null for account-level lines. */
  campaignUid: string | null;
  /** The stream (or `schedules`) the line is about. */
  stream: string;
  status: CheckStatus;
  /** The upstream's count (for a values line: the rows read, held live or not); null for a rejected record's line. */
  upstream: number | null;
  /** Live rows in the warehouse (for a values line: the rows read that it holds live, which were compared). */
  warehouse: number;
  /** Records of it rejected and still met. */
  rejected: number;
  /** With key sets compared: how many are missing or extra, and the first few of each (a values line: the rows read not held live). */
  missingKeys?: KeyList;
  extraKeys?: KeyList;
  /** For a `rejected` line: why, and what of its key could be read; for an `unknown` line: why. */
  reason?: string;
  recordKey?: string | null;
  /** For a values line: the table whose rows the stream's records were compared with. */
  table?: string;
  /** For a values line: the rows whose values differ, and per column how many of them. */
  differingKeys?: KeyList;
  columns?: Record<string, number>;
}

export type { KeyList };

export interface VerifyOptions {
  campaignUid?: string;
  /** Compare key sets of leads and events: for campaigns whose counts disagree, or for all. */
  deep?: "mismatched" | "all";
  /** Compare the values of the rows held with those of the records read (and each campaign's detail, one request more). */
  values?: boolean;
}

export interface VerifyResult {
  lines: VerifyLine[];
  /** Lines that are not `ok`. */
  problems: number;
  requests: number;
}

/** The campaign streams whose listings have a count to check. */
const COUNTED_STREAMS = [leads, replies, linkClicks, emailOpens] as (PagedStream<unknown> | ListStream<unknown>)[];

/** Verifies, and records the verdict in `verifications`. */
export async function verify(ctx: SyncContext, options: VerifyOptions = {}): Promise<VerifyResult> {
  const startedAt = new Date();
  const result = await reconcile(ctx, options);
  await recordVerification(ctx.db, { account: ctx.account, campaignUid: options.campaignUid ?? null }, ctx.trigger, startedAt, result);
  return result;
}

async function reconcile(ctx: SyncContext, options: VerifyOptions): Promise<VerifyResult> {
  const client = ctx.client.tallied();
  const run: SyncContext = { ...ctx, client };
  const lines: VerifyLine[] = [];
  const account = { account: ctx.account, campaignUid: null };
  const valuesOf = (scope: StreamScope) => (options.values === true ? new ScopeValues(run, scope) : undefined);
  let campaignUids: string[];
  let unheld = new Set<string>();
  // Campaigns the upstream lists (or, for one campaign, knows): their rows are compared by the lines above.
  const upstreamCampaigns = new Set<string>();
  if (options.campaignUid !== undefined) {
    const own = await campaignScopeLine(run, options.campaignUid);
    lines.push(own);
    campaignUids = own.status === "unknown" ? [] : [options.campaignUid];
    if (own.warehouse === 0) unheld = new Set(campaignUids);
    if (own.upstream === 1) upstreamCampaigns.add(options.campaignUid);
  } else {
    const values = valuesOf(account);
    for (const stream of ACCOUNT_STREAMS) {
      const listed = stream as PagedStream<unknown> | ListStream<unknown>;
      lines.push(
        await listedLine(run, listed, account, async () => {
          const upstream = await upstreamKeys(run, listed, account, undefined, values);
          if (stream.name === "campaigns") for (const uid of upstream.keys) upstreamCampaigns.add(uid);
          return upstream;
        }),
      );
    }
    lines.push(...(values?.lines() ?? []));
    const warehouseCampaigns = await liveKeySet(ctx.db, "campaigns", { _account: ctx.account });
    unheld = new Set([...upstreamCampaigns].filter((uid) => !warehouseCampaigns.has(uid)));
    campaignUids = [...new Set([...upstreamCampaigns, ...warehouseCampaigns])].sort();
  }
  for (const campaignUid of campaignUids) lines.push(...(await campaignLines(run, options, campaignUid, unheld.has(campaignUid), valuesOf)));
  lines.push(...(await orphanLines(ctx.db, ctx.account, options.campaignUid, upstreamCampaigns)));
  lines.push(...(await historyLines(ctx.db, ctx.account, options.campaignUid)));
  lines.push(...(await rejectedLines(ctx.db, ctx.account, options.campaignUid)));
  return { lines, problems: lines.filter((line) => line.status !== "ok").length, requests: client.stats.requests };
}

/** One campaign's lines: a count or key set per stream, its schedules when its leads were walked, and its values. */
async function campaignLines(
  run: SyncContext,
  options: VerifyOptions,
  campaignUid: string,
  unheld: boolean,
  valuesOf: (scope: StreamScope) => ScopeValues | undefined,
): Promise<VerifyLine[]> {
  const scope: StreamScope = { account: run.account, campaignUid };
  const listed: ListedSchedules = { ids: new Set(), sequences: new Set(), unreadable: new Set(), read: false };
  const values = valuesOf(scope);
  if (values) await compareCampaignDetail(run, values, campaignUid);
  const keyed = (stream: (typeof COUNTED_STREAMS)[number]) =>
    listedLine(run, stream, scope, () => upstreamKeys(run, stream, scope, stream === leads ? listed : undefined, values));
  const lines: VerifyLine[] = [];
  // `all` goes straight to the key sets. So does the unpaged replies listing, always: it is read whole either way,
  // and its length would count a reply it repeats twice, and miss one swapped for another. So do the leads of a
  // campaign the warehouse lacks: they are walked for its schedules anyway.
  // A listing that announces no usable total is compared by key: nothing else can tell what it holds.
  const keyedFirst = (stream: (typeof COUNTED_STREAMS)[number]) => options.deep === "all" || stream.kind === "list" || (stream === leads && unheld);
  for (const stream of COUNTED_STREAMS) {
    const counted = stream.kind === "paged" && !keyedFirst(stream) ? await countedLine(run, stream, scope) : undefined;
    lines.push(counted ?? (await keyed(stream)));
  }
  if (options.deep === "mismatched" && lines.some((line) => line.status !== "ok")) {
    // A line already compared by key (a listing without a total, the leads of a campaign the warehouse lacks) is not walked again.
    for (const [index, stream] of COUNTED_STREAMS.entries()) if (lines[index]?.missingKeys === undefined) lines[index] = await keyed(stream);
  }
  // The leads were walked: their schedules are compared by key, and the email sequences those send.
  if (listed.read) lines.push(...(await walkedScheduleLines(run.db, campaignUid, listed)));
  return [...lines, ...(values?.lines() ?? [])];
}

function statusOf(upstream: number, held: number): CheckStatus {
  return held < upstream ? "missing" : held > upstream ? "extra" : "ok";
}

/**
 * A paged stream's total against the warehouse's count; undefined when the upstream announces no count to compare
 * with, or two that disagree with each other and with the warehouse, and the stream must be compared by key.
 */
async function countedLine(ctx: SyncContext, stream: PagedStream<unknown>, scope: StreamScope): Promise<VerifyLine | undefined> {
  const completeness = stream.completeness;
  if (!completeness) throw new TypeError(`${stream.name} has no completeness rule to verify with`);
  // A total counts positions: a record a page listed twice is two, and one row. The sync's last proof counted such
  // copies, but a terminal campaign renews that proof only at its rewalk: the upstream may have stopped repeating
  // since, and a count that agrees through them may hide a missing record as well as one that disagrees may hide
  // none. Keys tell, without asking for a total first.
  const checkpoint = await loadCheckpoint(ctx.db, checkpointKey(ctx, stream, scope));
  if ((checkpoint.state.repeated ?? 0) > 0) return undefined;
  const [first, warehouse, rejected] = await Promise.all([
    upstreamTotal(ctx, stream, scope),
    liveRows(ctx.db, completeness.table, completeness.within(scope)),
    currentRejected(ctx.db, scope.account, stream.name, scope.campaignUid),
  ]);
  const held = warehouse + rejected;
  if (first === null) return undefined;
  // A real upstream reports a total a few off on one answer now and then: as the sync does (walk-proof.ts), a total
  // that disagrees is asked once more. The second answer stands when it agrees with the warehouse or with the first.
  const second = first === held ? first : await upstreamTotal(ctx, stream, scope);
  if (second === null || (second !== held && second !== first)) return undefined;
  return { campaignUid: scope.campaignUid, stream: stream.name, status: statusOf(second, held), upstream: second, warehouse, rejected };
}

/**
 * keyedLine of what the upstream lists; `unknown` when a whole listing says itself that it left records out, or
 * when no walk of a paged one could prove it read every record (it moved while verify read it).
 */
async function listedLine(
  ctx: SyncContext,
  stream: PagedStream<unknown> | ListStream<unknown>,
  scope: StreamScope,
  listed: () => Promise<ListedKeys>,
): Promise<VerifyLine> {
  try {
    return await keyedLine(ctx, stream, scope, await listed());
  } catch (error) {
    if (!(error instanceof ShortListingError || error instanceof IncompleteWalkError)) throw error;
    const completeness = stream.completeness;
    const warehouse = completeness ? await liveRows(ctx.db, completeness.table, completeness.within(scope)) : 0;
    return { campaignUid: scope.campaignUid, stream: stream.name, status: "unknown", upstream: error.total, warehouse, rejected: 0, reason: error.message };
  }
}

async function keyedLine(ctx: SyncContext, stream: PagedStream<unknown> | ListStream<unknown>, scope: StreamScope, upstream: ListedKeys): Promise<VerifyLine> {
  const completeness = stream.completeness;
  if (!completeness) throw new TypeError(`${stream.name} has no completeness rule to verify with`);
  const [held, rejected] = await Promise.all([
    liveKeySet(ctx.db, completeness.table, completeness.within(scope)),
    currentRejected(ctx.db, scope.account, stream.name, scope.campaignUid),
  ]);
  // Keys are those of placed records on both sides; a record that could not be placed has a `rejected` line of its
  // own. The upstream listing more of those than rejected_records keeps means one the warehouse holds nowhere.
  const missing = [...upstream.keys].filter((key) => !held.has(key));
  const extra = [...held].filter((key) => !upstream.keys.has(key));
  const unplacedNowhere = Math.max(0, upstream.unplaced - rejected);
  const status: CheckStatus = missing.length > 0 || unplacedNowhere > 0 ? "missing" : extra.length > 0 ? "extra" : "ok";
  const counts = { upstream: upstream.keys.size + upstream.unplaced, warehouse: held.size, rejected };
  const reason = unplacedNowhere > 0 ? { reason: `${unplacedNowhere} listed record(s) that cannot be placed are not in rejected_records either` } : {};
  return { campaignUid: scope.campaignUid, stream: stream.name, status, ...counts, missingKeys: keyList(missing), extraKeys: keyList(extra), ...reason };
}

async function rejectedLines(db: Kysely<Database>, account: string, campaignUid: string | undefined): Promise<VerifyLine[]> {
  let query = db
    .selectFrom("rejected_records")
    .select(["stream", "campaign_uid", "reason", "record_key", "parent_key", "skipped"])
    .where("account", "=", account)
    .where("resolved_at", "is", null)
    .orderBy("stream")
    .orderBy("id");
  if (campaignUid !== undefined) query = query.where("campaign_uid", "=", campaignUid);
  const rows = await query.execute();
  return rows.map((row) => ({
    campaignUid: row.campaign_uid,
    stream: row.stream,
    status: "rejected",
    upstream: null,
    warehouse: 0,
    rejected: 1,
    reason: row.skipped > 0 ? `${row.reason}; ${row.skipped} records below it not placed` : row.reason,
    recordKey: row.record_key ?? (row.parent_key === null ? null : `in ${row.parent_key}`),
  }));
}

/** The natural keys of a table's live rows within `filter`, as text in the streams' key form. */
async function liveKeySet(db: Kysely<Database>, table: SyncedTableName, filter: Record<string, string>): Promise<Set<string>> {
  return new Set((await keyRows(db, table, filter, "live")).map((row) => row.text));
}
