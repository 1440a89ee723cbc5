import type { Transaction } from "kysely";
import { addStage, stageStart } from "../stage-timings.ts";
import type { Page, RejectedRecord } from "../upstream/client.ts";
import { rejectedIdentity } from "../upstream/parsing.ts";
import { loadCheckpoint, previousScan, saveCheckpoint, type Checkpoint, type CheckpointState } from "./checkpoints.ts";
import type { Database } from "../warehouse/database.ts";
import { confirmMissing, NOTHING_TO_CONFIRM, UnconfirmedMissingError } from "./confirm-missing.ts";
import type { SyncContext } from "./context.ts";
import { inTransaction, writePage } from "./page-writer.ts";
import { WalkCoverage } from "./soft-delete.ts";
import type { PagedStream, StreamScope } from "./stream.ts";
import { ByteBudget } from "./byte-budget.ts";
import { addCounts, checkpointKey, fingerprint, throwIfAborted, type StreamOptions, type StreamResult } from "./stream-run.ts";
import { walk, type WalkPage, type WalkResult, type WalkStart } from "./walk.ts";
import { judgeWalk, reportListingIssue, REPEATED, UNKNOWN_TOTAL, UNLISTED } from "./walk-proof.ts";

/**
 * A paginated listing: walked with a healing cursor, each page written with
 * its checkpoint, then the scan is completed.
 *
 * Only a walk that started at offset 0 and can prove it saw every record may
 * soft-delete what it did not see, or count as a campaign status's full scan:
 * it must have read at least as many positions as the listing's final total:
 * distinct records, and the copies of one that a single page repeated (the
 * upstream's duplicate, named on the run as `<listing>.duplicate`; a record
 * met again on another page may have moved, and counts once). A record it
 * could not identify still holds back the soft-deletes of the rows it could
 * have been (WalkCoverage). A walk that falls short (records
 * slipped in behind the cursor) walks again from the start, a few times at
 * most. A resumed walk, or an append stream's continuation, proves nothing
 * about what lies before its start: it only lands what it reads. So an
 * append stream walks from the start again once its last proof is older than
 * APPEND_PROOF_MS: a record that vanished before its cursor while another
 * arrived there leaves every count a continuation can check unchanged.
 *
 * A walk that met a page without a usable total has nothing to count its
 * records against: it lands what it read and proves nothing. When it read the
 * listing through from the start, it judges what it did not see the way a
 * listing without a total does (run-list.ts): a row is soft-deleted once two
 * such walks in a row did not see it (WalkCoverage.markMissingAgain; a lead
 * only once its lookup confirms it gone too).
 */

/** Without a budget of the process's (tests of one run), pages are bounded by the walk alone: the one written and the next. */
const UNBOUNDED = new ByteBudget(Number.POSITIVE_INFINITY);

/** A walk that cannot prove it saw every record starts over, this many walks at most. */
export const MAX_PASSES = 4;

/** How long an append stream continues at its end before it walks from the start again (about 60 events cycles). */
export const APPEND_PROOF_MS = 60 * 60 * 1000;

export class IncompleteWalkError extends Error {
  constructor(
    stream: string,
    readonly seen: number,
    readonly total: number,
    passes: number,
  ) {
    super(`after ${passes} walks of ${stream} from the start, each read fewer positions still listed (last: ${seen}; distinct records, and the copies one page repeated) than the upstream's total (${total})`);
    this.name = "IncompleteWalkError";
  }
}

/**
 * What of a page a walk that started over must count and set aside: a walk before it in the same run met the
 * same records, and their unplaceable parts and deviating fields were counted then (the run met them once).
 */
function notMetEarlier<R>(earlier: readonly WalkCoverage<R>[], stream: PagedStream<R>, walked: WalkPage<R>): { alreadyRead: ReadonlySet<number>; rejected: RejectedRecord[] } {
  if (earlier.length === 0) return { alreadyRead: walked.alreadyRead, rejected: walked.freshRejected };
  const alreadyRead = new Set(walked.alreadyRead);
  walked.page.records.forEach((record, index) => {
    const key = stream.key(record.value);
    if (earlier.some((coverage) => coverage.hasRead(key))) alreadyRead.add(index);
  });
  const rejected = walked.freshRejected.filter((record) => !earlier.some((coverage) => coverage.hasMetUnplaced(rejectedIdentity(record))));
  return { alreadyRead, rejected };
}

/** Where a paged walk starts: an interrupted walk resumes, an append stream continues at its end while its last proof is recent. */
function walkStart(stream: PagedStream<unknown>, checkpoint: Checkpoint, now: Date): WalkStart {
  const tail = checkpoint.state.tail ?? [];
  const interrupted = checkpoint.scanStartedAt !== null && checkpoint.cursorOffset > 0;
  const { provenAt } = checkpoint.state;
  const provenRecently = provenAt !== undefined && now.getTime() - Date.parse(provenAt) < APPEND_PROOF_MS;
  const continuing = stream.checkpoint === "append" && checkpoint.lastCompleteScanAt !== null && provenRecently;
  return interrupted || continuing ? { offset: checkpoint.cursorOffset, tail } : { offset: 0, tail: [] };
}

export async function runPaged<R>(ctx: SyncContext, stream: PagedStream<R>, scope: StreamScope, options: StreamOptions<R>, result: StreamResult<R>): Promise<void> {
  const key = checkpointKey(ctx, stream, scope);
  const checkpoint = await loadCheckpoint(ctx.db, key);
  let start = walkStart(stream as PagedStream<unknown>, checkpoint, new Date());
  const scanStartedAt = checkpoint.scanStartedAt ?? new Date();
  // The walks of this run that started over (another pass, a restart): what they met was counted and set aside,
  // and not again by a later walk, so a rejected record counts as met since the run's first walk began.
  const earlier: WalkCoverage<R>[] = [];
  const firstWalkStartedAt = new Date();
  for (let pass = 1; ; pass += 1) {
    const walkStartedAt = new Date();
    let coverage = new WalkCoverage(stream);
    let restarts = 0;
    // Pages received without a usable total, or with their records in another shape: named on the run once the walk ends.
    let withoutTotal = 0;
    const reshaped = { count: 0, reason: "" };
    const budget = (ctx.pageBudget ?? UNBOUNDED).share();
    const pages = walk({
      fetch: async (offset, signal) => {
        await budget.room(signal);
        const page = (await ctx.client.page(stream.resource, { campaignUid: scope.campaignUid ?? undefined, offset }, signal)) as Page<R>;
        budget.hold(page, page.bytes ?? 0);
        if (page.total === null) withoutTotal += 1;
        if (page.shape !== undefined) {
          reshaped.count += 1;
          reshaped.reason = `listing answers in another shape than a list (the last: ${page.shape})`;
        }
        return page;
      },
      discard: (page) => budget.release(page),
      read: { record: (key) => coverage.hasRead(key), rejected: (identity) => coverage.hasMetUnplaced(identity) },
      key: stream.key,
      start,
      pageSize: ctx.client.pageSize,
      signal: ctx.signal,
    });
    let lastOffset = start.offset;
    let lastTail: string[] = [...start.tail];
    let step: IteratorResult<WalkPage<R>, WalkResult>;
    try {
      let waitStart = stageStart();
      step = await pages.next();
      addStage("fetchWait", waitStart);
      while (!step.done) {
        const walked = step.value;
        if (walked.restarts !== restarts) {
          restarts = walked.restarts;
          earlier.push(coverage);
          coverage = new WalkCoverage(stream);
        }
        const page = walked.page;
        const counts = await writePage(
          ctx,
          // The whole page is written, its newest copy of what an earlier page brought too; what the run counts and sets
          // aside is what neither this walk nor one before it in the run had met.
          { stream, scope, records: page.records, ...notMetEarlier(earlier, stream, walked), runId: options.runId, observedAt: page.observedAt },
          (trx) =>
            saveCheckpoint(
              trx,
              key,
              {
                cursorOffset: walked.nextOffset,
                upstreamTotal: page.total,
                fingerprint: fingerprint(walked.tail),
                scanStartedAt,
                lastCompleteScanAt: checkpoint.lastCompleteScanAt,
                state: { ...checkpoint.state, tail: walked.tail },
              },
              options.runId,
            ),
        );
        budget.release(page);
        result.fetched += walked.fresh.length + walked.freshRejected.length;
        addCounts(result, counts);
        if (options.onFresh) for (const record of walked.fresh) options.onFresh(record.value);
        // The proof counts positions read: the anchor among them, met again as one record.
        coverage.add(page.records, page.rejected);
        lastOffset = walked.nextOffset;
        lastTail = walked.tail;
        throwIfAborted(ctx.signal);
        waitStart = stageStart();
        step = await pages.next();
        addStage("fetchWait", waitStart);
      }
    } finally {
      // A page still requested when the walk stops early is never written.
      budget.close();
    }
    const walkResult = step.value;
    const fromStart = walkResult.fromStart;
    const judged = await judgeWalk(ctx, stream, scope, walkResult, coverage, checkpoint.state.repeated ?? 0, pass >= MAX_PASSES, () => (withoutTotal += 1));
    reportListingIssue(ctx, stream as PagedStream<unknown>, scope, { what: "total", count: withoutTotal, reason: UNKNOWN_TOTAL }, result);
    reportListingIssue(ctx, stream as PagedStream<unknown>, scope, { what: "duplicate", count: coverage.repeated, reason: REPEATED }, result);
    reportListingIssue(ctx, stream as PagedStream<unknown>, scope, { what: "data", ...reshaped }, result);
    if (judged === "again") {
      ctx.logger.info(
        { stream: stream.name, campaignUid: scope.campaignUid, pass, seen: coverage.distinct + coverage.repeated, total: walkResult.total },
        "the listing moved while it was read; walking again from the start",
      );
      start = { offset: 0, tail: [] };
      earlier.push(coverage);
      continue;
    }
    const { total, complete, proven } = judged;
    // Without a total, a walk from the start still read the listing through: what it did not see is gone once
    // the next such walk does not see it either (markMissingAgain).
    const twice = total === null && fromStart;
    const previouslyMissing = checkpoint.state.missing ?? [];
    // Lookups happen before the completion's transaction, which must not hold its locks over requests.
    const confirmation = proven || twice ? await confirmMissing(ctx, stream, coverage, scope, walkStartedAt, twice ? new Set(previouslyMissing) : undefined) : NOTHING_TO_CONFIRM;
    // Records its lookups fetched, placed or not: a lookup that got no record (a 404, a failure) fetched nothing.
    result.fetched += confirmation.present.length + confirmation.rejected.length;
    reportListingIssue(ctx, stream as PagedStream<unknown>, scope, { what: "listing", count: confirmation.present.length, reason: UNLISTED }, result);
    const completion = async (trx: Transaction<Database>) => {
      const completedAt = new Date();
      let judgedState: CheckpointState = {};
      if (proven) {
        await coverage.markMissing(trx, scope, completedAt, walkStartedAt);
        await coverage.resolveRejected(trx, scope, firstWalkStartedAt, completedAt);
        // What the proof proves: a row it did not see is gone now, and an earlier walk's doubts are settled.
        judgedState = {
          ...options.completedState,
          provenAt: completedAt.toISOString(),
          repeated: coverage.repeated || undefined,
          unconfirmedMissing: confirmation.undecided || undefined,
          missing: undefined,
          missingSince: undefined,
        };
      } else if (twice) {
        const missing = await coverage.markMissingAgain(trx, scope, completedAt, walkStartedAt, previouslyMissing);
        const since = checkpoint.state.missingSince;
        // Rejected records neither the previous walk nor this one met.
        if (since !== undefined) await coverage.resolveRejected(trx, scope, new Date(since), completedAt);
        judgedState = { missing, missingSince: walkStartedAt.toISOString() };
      }
      const appendAtEnd = stream.checkpoint === "append";
      await saveCheckpoint(
        trx,
        key,
        {
          cursorOffset: appendAtEnd ? lastOffset : 0,
          upstreamTotal: total,
          fingerprint: appendAtEnd ? fingerprint(lastTail) : null,
          scanStartedAt: null,
          // A walk that fell short is not a complete scan: the stream's lag keeps growing until one is.
          lastCompleteScanAt: complete ? completedAt : checkpoint.lastCompleteScanAt,
          state: { ...checkpoint.state, ...judgedState, tail: appendAtEnd ? lastTail : [], ...(complete ? previousScan(checkpoint) : {}) },
        },
        options.runId,
      );
    };
    const { present, rejected } = confirmation;
    if (present.length === 0 && rejected.length === 0) await inTransaction(ctx.db, completion);
    else {
      // Records found by their lookups land with the checkpoint, as a page does, and answers that cannot be placed
      // are set aside with it; the earliest lookup stands for when they were observed, so a copy read since by
      // another read is not overwritten.
      const observedAt = present.length === 0 ? walkStartedAt : new Date(Math.min(...present.map((lookup) => lookup.observedAt.getTime())));
      const records = present.map((lookup) => lookup.record);
      addCounts(result, await writePage(ctx, { stream, scope, records, rejected, runId: options.runId, observedAt }, completion));
    }
    result.proven = proven;
    if (judged.shortOf) throw new IncompleteWalkError(stream.name, judged.shortOf.seen, judged.shortOf.total, pass);
    if (confirmation.failures.length > 0) throw new UnconfirmedMissingError(stream.name, confirmation);
    return;
  }
}
