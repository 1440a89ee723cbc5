import type { Page } from "../upstream/client.ts";

/**
 * A walk through a paginated listing with a cursor that heals.
 *
 * The upstream guarantees no order and records arrive or vanish between two
 * page requests (contract A.3). Records inserted before the cursor push the
 * rest forward, so at worst a record is read twice, which idempotent upserts
 * absorb. Records removed before the cursor pull the rest backward, and then a
 * plain offset would skip some. So whenever the ground may have moved (a
 * resumed walk, or a `total` that changed since the previous page) the page is
 * asked again starting `overlap` records early, and must hold one of the last
 * keys read before it (the tail); if none is there, the walk starts over from
 * offset 0. Records inserted before the cursor are not this walk's to find:
 * the engine compares the warehouse with the final total and walks again.
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
  /** Records in this page past the anchor: the ones this walk had not read yet. */
  fresh: R[];
  /** How many times the walk has started over so far; keys gathered before a restart no longer describe the listing. */
  restarts: number;
}

export interface WalkResult {
  total: number;
  /** True when the walk covered the listing from offset 0, so every live record was seen. */
  fromStart: boolean;
  restarts: number;
}

export interface WalkOptions<R> {
  fetch(offset: number, signal?: AbortSignal): Promise<Page<R>>;
  key(record: R): string;
  start: WalkStart;
  overlap?: number;
  /** Starts over at most this many times before giving up on a listing that keeps moving. */
  maxRestarts?: number;
  signal?: AbortSignal;
}

export class UnstableListingError extends Error {
  constructor(restarts: number) {
    super(`the listing kept shifting under the cursor; gave up after ${restarts} restarts`);
    this.name = "UnstableListingError";
  }
}

const DEFAULT_OVERLAP = 5;
const DEFAULT_MAX_RESTARTS = 3;

interface Request {
  offset: number;
  /** Whether the answer must contain one of the tail's keys. */
  anchored: boolean;
}

export async function* walk<R>(options: WalkOptions<R>): AsyncGenerator<WalkPage<R>, WalkResult> {
  const overlap = options.overlap ?? DEFAULT_OVERLAP;
  const maxRestarts = options.maxRestarts ?? DEFAULT_MAX_RESTARTS;
  let tail = [...options.start.tail];
  let fromStart = options.start.offset === 0;
  let restarts = 0;
  let previousTotal: number | undefined;

  const anchoredRequest = (offset: number): Request =>
    offset > 0 && tail.length > 0 ? { offset: Math.max(0, offset - overlap), anchored: true } : { offset, anchored: false };
  const send = (request: Request) => {
    const pending = options.fetch(request.offset, options.signal);
    // A prefetched page may be abandoned when the consumer stops early.
    pending.catch(() => undefined);
    return { request, pending };
  };

  let inFlight = send(options.start.offset > 0 ? anchoredRequest(options.start.offset) : { offset: 0, anchored: false });
  for (;;) {
    const { request } = inFlight;
    const page = await inFlight.pending;
    const keys = page.records.map(options.key);
    let fresh = page.records;
    if (request.anchored) {
      const anchorAt = findAnchor(keys, tail);
      if (anchorAt === -1) {
        restarts += 1;
        if (restarts > maxRestarts) throw new UnstableListingError(maxRestarts);
        tail = [];
        fromStart = true;
        previousTotal = undefined;
        inFlight = send({ offset: 0, anchored: false });
        continue;
      }
      fresh = page.records.slice(anchorAt + 1);
    }
    const moved = previousTotal !== undefined && page.total !== previousTotal;
    previousTotal = page.total;
    if (moved && !request.anchored && tail.length > 0) {
      // The listing changed since the last page, so this page may start past records it should hold: ask again with overlap.
      inFlight = send(anchoredRequest(request.offset));
      continue;
    }
    const received = page.records.length + page.rejected.length;
    const nextOffset = request.offset + received;
    tail = [...tail, ...keys].slice(-overlap);
    const finished = received === 0 || nextOffset >= page.total;
    if (!finished) inFlight = send({ offset: nextOffset, anchored: false });
    yield { page, nextOffset, tail, fresh, restarts };
    if (finished) return { total: page.total, fromStart, restarts };
  }
}

/** Index in `keys` of the newest tail key present, or -1. */
function findAnchor(keys: readonly string[], tail: readonly string[]): number {
  for (let index = tail.length - 1; index >= 0; index -= 1) {
    const position = keys.lastIndexOf(tail[index] as string);
    if (position !== -1) return position;
  }
  return -1;
}
