import type { SyncContext } from "./context.ts";
import { currentRejected, listingTotal, liveRows } from "./counts.ts";
import type { WalkCoverage } from "./soft-delete.ts";
import type { ListStream, PagedStream, StreamScope } from "./stream.ts";
import type { StreamResult } from "./stream-run.ts";
import type { WalkResult } from "./walk.ts";

/**
 * What a finished walk proves (run-paged.ts): whether it saw every record,
 * and so may soft-delete what it did not see at once; whether, short of
 * that, it read the listing through from the start, which a listing without
 * a total allows to judge what it did not see by two walks in a row; or
 * whether it must walk again.
 *
 * The total counts positions, so a walk counts what it read as positions: its
 * distinct records, and each copy of one that a single page repeated (the
 * upstream listed a record twice in one answer: both positions were read). A
 * record met again on another page counts once: between two requests it may
 * have moved, and then a record the walk never saw may hold its old place.
 */

/** Why a listing's pages without a usable total are named on the run. */
export const UNKNOWN_TOTAL =
  "listing page without a usable total: read, but the walk cannot prove it saw every record; deletions need two walks";

/** Why a whole listing (#13, #18) whose envelope's total counts more records than it holds is named on the run. */
export const SHORT_LISTING =
  "whole listing whose total counts more records than it holds: its records were written, but what it left out is not judged deleted and the read is not complete";

export interface Judgement {
  /** The listing's final total; null when a page of the walk announced none usable. */
  total: number | null;
  /** The walk read the whole listing: with a total, at least as many distinct records; without, through from the start. */
  complete: boolean;
  /** The walk started at offset 0 and saw every record: it soft-deletes what it did not see, and counts as a full scan. */
  proven: boolean;
  /** With a total the walk fell short of: the positions it read (distinct records and one page's repeats), still listed. */
  shortOf?: { seen: number; total: number };
}

/**
 * `again`: the listing moved while it was read, and another walk from the start may still prove it whole.
 * `repeatedAtProof`: the repeats the last proven walk counted (checkpoint state), which a continuation's count of
 * the warehouse, one row per record, cannot see.
 */
export async function judgeWalk<R>(
  ctx: SyncContext,
  stream: PagedStream<R>,
  scope: StreamScope,
  walked: WalkResult,
  coverage: WalkCoverage<R>,
  repeatedAtProof: number,
  lastPass: boolean,
  onUnknownTotal: () => void,
): Promise<Judgement | "again"> {
  const unknown: Judgement = { total: null, complete: walked.fromStart, proven: false };
  if (walked.total === null) return unknown;
  // Positions a walk from the start read; for a continuation, what the warehouse holds.
  const held = walked.fromStart ? coverage.distinct + coverage.repeated : await tailHeld(ctx, stream as PagedStream<unknown>, scope, walked.total, repeatedAtProof);
  // Real upstreams report a total a few off on one answer. Where the walk saw the listing hold still, asking the total
  // once more costs one record, and walking again all of them.
  const stillListing = walked.vanished === 0 && walked.arrived === 0;
  const total = held !== walked.total && stillListing ? await listingTotal(ctx, stream as PagedStream<unknown>, scope) : walked.total;
  if (total === null) {
    onUnknownTotal();
    return unknown;
  }
  // Records the walk saw vanish are still counted in `held`: without them it must still reach the total.
  const complete = held - walked.vanished >= total;
  // Fewer records than the total: some slipped in behind the cursor. More, or any seen to vanish: some held are gone,
  // and an equal count may only mean one gone for each that slipped in.
  const exact = held === total && walked.vanished === 0;
  if (!exact && !lastPass) return "again";
  return { total, complete, proven: walked.fromStart && complete, shortOf: complete ? undefined : { seen: held - walked.vanished, total } };
}

/** Why listed records the walk did not see but their lookups found are named on the run. */
export const UNLISTED =
  "records the walk did not see that their lookups found: the listing left them out (or moved them behind the cursor); they were written, and more of them than a walk looks up stay undeleted";

/** Why copies of a record that one answer (a page, or a whole listing) repeated are named on the run. */
export const REPEATED =
  "records listed more than once in one answer (a page, or a whole listing): each is written once; a paged walk counts each copy as a position read toward the total";

/** The name a listing's issues go by (README): the resource a paged stream walks, or the stream a whole listing is (workspaces, replies). */
function listingName(stream: PagedStream<unknown> | ListStream<unknown>): string {
  return stream.kind === "paged" ? stream.resource : stream.name;
}

/**
 * Names on the run what a read found wrong with its listing, as deviating fields are (`<listing>.<what>` in
 * `sync_runs.field_issues` and /metrics), with one warning per walk or read: pages without a usable total
 * (`<listing>.total`), records the listing left out that their lookups found (`<listing>.listing`), copies of
 * a record one answer repeated (`<listing>.duplicate`), answers whose records came in another shape than a list
 * (`<listing>.data`).
 */
export function reportListingIssue(
  ctx: SyncContext,
  stream: PagedStream<unknown> | ListStream<unknown>,
  scope: StreamScope,
  issue: { what: "total" | "listing" | "duplicate" | "data"; count: number; reason: string },
  result: StreamResult,
): void {
  if (issue.count === 0) return;
  const field = `${listingName(stream)}.${issue.what}`;
  result.fieldIssues[field] = (result.fieldIssues[field] ?? 0) + issue.count;
  ctx.observer?.onFieldIssues?.(stream.name, field, issue.count);
  ctx.logger.warn({ stream: stream.name, campaignUid: scope.campaignUid, field, count: issue.count }, issue.reason);
}

/**
 * An append stream's continuation reads only the tail of its listing, so it
 * counts the warehouse instead: its live rows plus the stream's rejected
 * records, and the repeats its last proof counted, to match the upstream's
 * total. Fewer means records arrived before the cursor (a listing not in
 * creation order); more means records the warehouse holds are gone upstream
 * (or the upstream mended a repeat). Either way the stream is walked again
 * from the start, which can tell which.
 */
async function tailHeld(ctx: SyncContext, stream: PagedStream<unknown>, scope: StreamScope, total: number, repeated: number): Promise<number> {
  if (!stream.completeness) return total;
  const [live, rejected] = await Promise.all([
    liveRows(ctx.db, stream.completeness.table, stream.completeness.within(scope)),
    currentRejected(ctx.db, scope.account, stream.name, scope.campaignUid),
  ]);
  return live + rejected + repeated;
}
