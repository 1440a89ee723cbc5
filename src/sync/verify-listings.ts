import { UpstreamError } from "../upstream/client.ts";
import { isUsableKey } from "../upstream/parsing.ts";
import type { SyncContext } from "./context.ts";
import { listingTotal } from "./counts.ts";
import { IncompleteWalkError, MAX_PASSES } from "./run-paged.ts";
import { ShortListingError } from "./run-list.ts";
import { WalkCoverage } from "./soft-delete.ts";
import type { ScopeValues } from "./verify-values.ts";
import type { ListStream, PagedStream, StreamScope } from "./stream.ts";
import { walk } from "./walk.ts";
import { judgeWalk } from "./walk-proof.ts";

/**
 * What the upstream lists, as verify reads it (verify.ts): a stream's keys in a scope, walked with the sync's
 * healing walk, or its count; a campaign the upstream no longer knows (404) lists nothing.
 */

/** What a listing of a campaign the upstream no longer knows (404) holds: `none`. */
async function unlessGone<T>(scope: StreamScope, read: () => Promise<T>, none: T): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (scope.campaignUid !== null && error instanceof UpstreamError && error.status === 404) return none;
    throw error;
  }
}

/** The schedules a walk of a campaign's leads listed, and the leads whose list of them could not be read whole. */
export interface ListedSchedules {
  ids: Set<string>;
  /** The email sequences the schedules listed send (`email_data.id`). */
  sequences: Set<string>;
  unreadable: Set<string>;
  /** Whether a walk of the leads finished. */
  read: boolean;
}

/** What the upstream lists for a stream and scope: the keys of the records that can be placed, and how many cannot. */
export interface ListedKeys {
  /** In the stream's key form. */
  keys: ReadonlySet<string>;
  /** Distinct records that could not be placed (by rejectedIdentity): the warehouse keeps each in rejected_records. */
  unplaced: number;
}

function listedIn(coverage: WalkCoverage<unknown>): ListedKeys {
  return { keys: coverage.readKeys, unplaced: coverage.unplacedRecords };
}

/**
 * Every key the upstream lists for a stream and scope; a walk of leads also fills `schedules`, and the records
 * read are compared by value when `values` is given.
 */
export async function upstreamKeys(ctx: SyncContext, stream: PagedStream<unknown> | ListStream<unknown>, scope: StreamScope, schedules?: ListedSchedules, values?: ScopeValues): Promise<ListedKeys> {
  return unlessGone(scope, () => listedKeys(ctx, stream, scope, schedules, values), { keys: new Set(), unplaced: 0 });
}

type ListedLead = { uid: string; schedules: ({ id: unknown; email_data?: { id?: unknown } | null } | null)[] | null };

async function listedKeys(ctx: SyncContext, stream: PagedStream<unknown> | ListStream<unknown>, scope: StreamScope, schedules?: ListedSchedules, values?: ScopeValues): Promise<ListedKeys> {
  if (stream.kind === "list") {
    const listing = await stream.fetch(ctx.client, scope, ctx.signal);
    const positions = listing.records.length + listing.rejected.length;
    if (listing.total !== null && positions < listing.total) throw new ShortListingError(stream.name, positions, listing.total, "nothing whole to compare with");
    const coverage = new WalkCoverage(stream);
    coverage.add(listing.records, listing.rejected);
    await values?.begin(stream).compare(listing.records);
    return listedIn(coverage);
  }
  // Walked as the sync walks (run-paged.ts): a walk that cannot prove it read every record walks again from the
  // start, and one that never can is not compared (a record that moved while it was read would be missing, or extra).
  for (let pass = 1; ; pass += 1) {
    const coverage = new WalkCoverage(stream);
    let compared = values?.begin(stream);
    const reset = () => {
      schedules?.ids.clear();
      schedules?.sequences.clear();
      schedules?.unreadable.clear();
      coverage.clear();
      compared = values?.begin(stream);
    };
    reset();
    const pages = walk({
      fetch: (offset, signal) => ctx.client.page(stream.resource, { campaignUid: scope.campaignUid ?? undefined, offset }, signal),
      key: stream.key,
      // Compared values: also those of records that arrived before a page's anchor, which no earlier page brought.
      read: { record: (key) => coverage.hasRead(key), rejected: () => true },
      start: { offset: 0, tail: [] },
      pageSize: ctx.client.pageSize,
      signal: ctx.signal,
    });
    let restarts = 0;
    let step = await pages.next();
    while (!step.done) {
      const walked = step.value;
      // Keys read before the walk started over no longer describe the listing.
      if (walked.restarts !== restarts) reset();
      restarts = walked.restarts;
      coverage.add(walked.page.records, walked.page.rejected);
      if (schedules !== undefined) for (const record of walked.page.records) addSchedules(schedules, record.value as ListedLead);
      // Only the records past the page's anchor: the anchor was compared with the page before.
      await compared?.compare(walked.fresh);
      step = await pages.next();
    }
    const judged = await judgeWalk(ctx, stream, scope, step.value, coverage, 0, pass >= MAX_PASSES, () => undefined);
    if (judged === "again") continue;
    if (judged.shortOf) throw new IncompleteWalkError(stream.name, judged.shortOf.seen, judged.shortOf.total, pass);
    if (schedules !== undefined) schedules.read = true;
    return listedIn(coverage);
  }
}

function addSchedules(schedules: ListedSchedules, lead: ListedLead): void {
  if (lead.schedules === null) schedules.unreadable.add(lead.uid);
  for (const item of lead.schedules ?? []) {
    if (item !== null && isUsableKey(item.id)) schedules.ids.add(String(item.id));
    else schedules.unreadable.add(lead.uid);
    if (item !== null && isUsableKey(item.email_data?.id)) schedules.sequences.add(String(item.email_data?.id));
  }
}

/** A paged campaign stream's total: null when the listing announces none usable, 0 for a campaign the upstream no longer knows. */
export async function upstreamTotal(ctx: SyncContext, stream: PagedStream<unknown>, scope: StreamScope): Promise<number | null> {
  return unlessGone(scope, () => listingTotal(ctx, stream, scope), 0);
}
