import type { Page, ReadRecord, RejectedRecord } from "../upstream/client.ts";
import { isLastPage, servedPageSize } from "../upstream/paging.ts";
import { rejectedIdentity } from "../upstream/parsing.ts";

/**
 * A walk through a paginated listing with a cursor that heals.
 *
 * The upstream guarantees no order, records arrive or vanish between two page
 * requests (contract A.3), and real upstreams cap pages below the asked limit
 * or report a total that is off. So every page after the first is asked one
 * record early and must start with the last record read before it (the
 * anchor):
 * - the anchor first: nothing moved;
 * - the anchor further in: records arrived before the cursor; what follows
 *   the anchor is new to this walk, and the rest was read already;
 * - no anchor: records before the cursor vanished, so the page is asked again
 *   from further back and must hold one of the last keys read (the tail);
 *   without one either, the walk starts over from offset 0.
 * Records inserted before the cursor are not this walk's to find; the engine
 * counts the distinct keys a walk saw against the total to know whether it
 * saw everything (run-paged.ts). A count alone is fooled when a record the
 * walk read vanishes and one it did not read arrives behind the cursor, so
 * the walk also counts the pages that lost their anchor while the total
 * dropped (at least one record it read is gone), and the pages whose anchor
 * came further in while the total rose (at least one arrived behind the
 * cursor). A moved anchor alone proves nothing: a page that repeats its
 * predecessor's last record looks the same, and so does the next one.
 *
 * The listing ends at an empty page, at a page shorter than the page size the
 * upstream has been serving once the offset has reached the total (see
 * isLastPage), or at an anchored page that holds nothing past its anchor:
 * neither a capped page nor a wrong total ends it early or keeps it going. An
 * empty page where the total promises more is asked once more before it is
 * believed.
 *
 * A page without a usable total (Page.total null) is walked like any other,
 * but nothing is read from its total: a short page does not end the walk
 * (an anchored page that brings nothing new does, or an empty page asked
 * twice), and the vanished and arrived counts skip the pages whose total, or
 * whose predecessor's, is unknown. The walk then says its total is unknown:
 * it cannot prove it saw every record.
 *
 * The next page is requested before the current one is handed out, so writing
 * one page overlaps fetching the next.
 */

export interface WalkStart {
  offset: number;
  /** Keys of the last records read before `offset`, newest last. */
  tail: readonly string[];
}

export interface WalkPage<R> {
  page: Page<R>;
  /** Offset to resume from once this page is stored. */
  nextOffset: number;
  /** The tail to store with the checkpoint of this page. */
  tail: string[];
  /** The page's records this walk had not read yet: past the anchor, and any before it that arrived there since the last page. */
  fresh: ReadRecord<R>[];
  /** Positions in `page.records` of the ones an earlier page of this walk brought: the anchor, and what moved before the cursor. */
  alreadyRead: ReadonlySet<number>;
  /** The page's records that could not be placed, but for the ones an earlier page of this walk brought. */
  freshRejected: RejectedRecord[];
  /** How many times the walk has started over so far; keys gathered before a restart no longer describe the listing. */
  restarts: number;
}

export interface WalkResult {
  /** The total of the last page; null when a page the walk received since it last started announced none usable. */
  total: number | null;
  /** True when the walk covered the listing from offset 0. */
  fromStart: boolean;
  restarts: number;
  /** Since the walk last started, how many pages lost their anchor while the total dropped: a lower bound on the records it read that vanished. */
  vanished: number;
  /** Since the walk last started, how many pages found their anchor further in while the total rose: a lower bound on the records that arrived behind the cursor. */
  arrived: number;
}

export interface WalkOptions<R> {
  fetch(offset: number, signal?: AbortSignal): Promise<Page<R>>;
  key(record: R): string;
  start: WalkStart;
  /** The limit every request asks for. */
  pageSize: number;
  /** How far back a page is asked again when its anchor is gone. */
  overlap?: number;
  /** Starts over at most this many times before giving up on a listing that keeps moving. */
  maxRestarts?: number;
  signal?: AbortSignal;
  /** Told of each page the walk drops without handing it out (asked again, or not where it should be). */
  discard?(page: Page<R>): void;
  /**
   * What this walk has read since it last started: placed records by key, records that could not be placed by
   * their identity. Records before a page's anchor that it has not read arrived there between two requests, and
   * are fresh. Without it, only the tail is known read, and everything before the anchor counts as read.
   */
  read?: { record(key: string): boolean; rejected(identity: string): boolean };
}

export class UnstableListingError extends Error {
  constructor(restarts: number) {
    super(`the listing kept shifting under the cursor; gave up after ${restarts} restarts`);
    this.name = "UnstableListingError";
  }
}

/**
 * An upstream that ignores `offset` (a proxy that drops the query, a half-deployed API) answers every page with
 * the same records: the cursor moves, nothing new comes, and no page is short. Records inserted at the front
 * between two requests can make one page repeat its predecessor; this many repeats in a row cannot be that.
 */
export class UnpagedListingError extends Error {
  constructor(offset: number) {
    super(`the upstream answered offset ${offset} with the records of the pages before it: it ignores the offset, and the records past its first page cannot be reached`);
    this.name = "UnpagedListingError";
  }
}

const UNPAGED_REPEATS = 2;

const TAIL_LENGTH = 5;
const DEFAULT_OVERLAP = 5;
const DEFAULT_MAX_RESTARTS = 3;

interface Request {
  offset: number;
  /** Where the offset the walk reached lies: the page must hold the anchor (`near`) or a tail key (`wide`), or nothing was read yet (`none`). */
  anchor: "none" | "near" | "wide";
  /** The offset the walk had reached when this request was planned. */
  reached: number;
  /** Whether this is the second ask of a page that came back empty. */
  again: boolean;
}

export async function* walk<R>(options: WalkOptions<R>): AsyncGenerator<WalkPage<R>, WalkResult> {
  const overlap = options.overlap ?? DEFAULT_OVERLAP;
  const maxRestarts = options.maxRestarts ?? DEFAULT_MAX_RESTARTS;
  let tail = [...options.start.tail];
  let fromStart = options.start.offset === 0;
  let restarts = 0;
  let vanished = 0;
  let arrived = 0;
  // Before any page, every total counts as a drop: a resumed walk's first page that lost its anchor lost a record.
  let lastTotal: number | null = Number.POSITIVE_INFINITY;
  let totalUnknown = false;
  let pageSize = options.pageSize;
  let previousKeys: string[] = [];
  let repeats = 0;

  const planFrom = (reached: number): Request =>
    reached > 0 && tail.length > 0 ? { offset: reached - 1, anchor: "near", reached, again: false } : { offset: reached, anchor: "none", reached, again: false };
  const send = (request: Request) => {
    const pending = options.fetch(request.offset, options.signal);
    // A prefetched page may be abandoned when the consumer stops early.
    pending.catch(() => undefined);
    return { request, pending };
  };
  const restart = () => {
    restarts += 1;
    if (restarts > maxRestarts) throw new UnstableListingError(maxRestarts);
    tail = [];
    previousKeys = [];
    repeats = 0;
    fromStart = true;
    vanished = 0;
    arrived = 0;
    totalUnknown = false;
    pageSize = options.pageSize;
    return send({ offset: 0, anchor: "none", reached: 0, again: false });
  };

  let inFlight = send(planFrom(options.start.offset));
  for (;;) {
    const { request } = inFlight;
    const page = await inFlight.pending;
    // Any page without one, kept or not, leaves a move the counts below could not see.
    if (page.total === null) totalUnknown = true;
    const received = page.records.length + page.rejected.length;
    if (received === 0 && (page.total === null || request.reached < page.total) && !request.again) {
      // An empty page where the total promises more, or where no total says there is no more, is more often
      // a glitch than the end. (A walk without totals ends at an anchored page that brings nothing new.)
      options.discard?.(page);
      inFlight = send({ ...request, again: true });
      continue;
    }
    const keys = listedKeys(page, options.key);
    let fresh: Fresh<R> = { records: page.records, rejected: page.rejected, alreadyRead: NONE_READ };
    if (request.anchor !== "none") {
      const anchorAt = request.anchor === "near" ? keys.lastIndexOf(tail.at(-1) as string) : findAnyTailKey(keys, tail);
      if (anchorAt === -1) {
        if (request.anchor === "near" && compare(page.total, lastTotal) < 0) vanished += 1;
        options.discard?.(page);
        inFlight = request.anchor === "near" ? send({ ...request, offset: Math.max(0, request.reached - overlap), anchor: "wide", again: false }) : restart();
        continue;
      }
      if (request.anchor === "near" && anchorAt > 0 && compare(page.total, lastTotal) > 0) arrived += 1;
      fresh = pastAnchor(page, anchorAt, options.key, readBefore(tail, options.read));
    }
    repeats = keys.length > 0 && sameKeys(keys, previousKeys) ? repeats + 1 : 0;
    previousKeys = keys;
    // The same page again and again: it is the whole listing when it holds the total, else the rest is out of reach.
    const unpaged = repeats >= UNPAGED_REPEATS;
    if (unpaged && (page.total === null || received < page.total)) throw new UnpagedListingError(request.offset);
    const nextOffset = request.offset + received;
    lastTotal = page.total;
    tail = [...tail, ...keys].slice(-TAIL_LENGTH);
    // A page that brings nothing past the anchor and moves the cursor nowhere is the end, whatever the total claims.
    const stalled = fresh.records.length === 0 && fresh.rejected.length === 0 && nextOffset <= request.reached;
    const last = stalled || unpaged || isLastPage(received, nextOffset, page.total, pageSize);
    pageSize = servedPageSize(pageSize, received, nextOffset, page.total);
    if (!last) inFlight = send(planFrom(nextOffset));
    yield { page, nextOffset, tail, fresh: fresh.records, alreadyRead: fresh.alreadyRead, freshRejected: fresh.rejected, restarts };
    if (last) return { total: totalUnknown ? null : page.total, fromStart, restarts, vanished, arrived };
  }
}

function sameKeys(keys: readonly string[], previous: readonly string[]): boolean {
  return keys.length === previous.length && keys.every((key, index) => key === previous[index]);
}

/** How a page's total compares with its predecessor's: 0 (no move) when either is unknown. */
function compare(total: number | null, previous: number | null): number {
  return total === null || previous === null ? 0 : total - previous;
}

/**
 * The keys of a page's records in the order the upstream listed them, the
 * rejected ones by their identity: any record can anchor the next page, so
 * records that could not be placed at the end of a page do not lose the walk
 * its place.
 */
function listedKeys<R>(page: Page<R>, key: (record: R) => string): string[] {
  const keys = page.records.map((record) => key(record.value));
  // Rejected records come in the order they were listed, so each position is already right when it is inserted.
  for (const rejected of page.rejected) keys.splice(rejected.position ?? keys.length, 0, rejectedIdentity(rejected));
  return keys;
}

interface Fresh<R> {
  records: ReadRecord<R>[];
  rejected: RejectedRecord[];
  alreadyRead: ReadonlySet<number>;
}

const NONE_READ: ReadonlySet<number> = new Set();

/** Whether the walk read a record before: a key of the tail it anchors on, or one `read` knows. */
function readBefore(tail: readonly string[], read: WalkOptions<unknown>["read"]): NonNullable<WalkOptions<unknown>["read"]> {
  const inTail = new Set(tail);
  return {
    record: (key) => inTail.has(key) || (read?.record(key) ?? true),
    rejected: (identity) => inTail.has(identity) || (read?.rejected(identity) ?? true),
  };
}

/**
 * The page's placed and rejected records this walk had not read: those after `index` of its listed keys (the
 * anchor's), and those at or before it that it never met (they arrived between two already read).
 */
function pastAnchor<R>(page: Page<R>, index: number, key: (record: R) => string, read: NonNullable<WalkOptions<R>["read"]>): Fresh<R> {
  // Rejected records come in the order they were listed: those at or before the anchor are the first ones.
  const rejectedUpTo = page.rejected.filter((rejected) => (rejected.position ?? Number.POSITIVE_INFINITY) <= index).length;
  const placedUpTo = index + 1 - rejectedUpTo;
  const alreadyRead = new Set<number>();
  const records: ReadRecord<R>[] = [];
  page.records.forEach((record, position) => {
    if (position < placedUpTo && read.record(key(record.value))) alreadyRead.add(position);
    else records.push(record);
  });
  const rejected = page.rejected.filter((record, position) => position >= rejectedUpTo || !read.rejected(rejectedIdentity(record)));
  return { records, rejected, alreadyRead };
}

/** Index in `keys` of the newest tail key present, or -1. */
function findAnyTailKey(keys: readonly string[], tail: readonly string[]): number {
  for (let index = tail.length - 1; index >= 0; index -= 1) {
    const position = keys.lastIndexOf(tail[index] as string);
    if (position !== -1) return position;
  }
  return -1;
}
