import { describe, expect, it } from "vitest";
import type { Page } from "../../src/upstream/client.ts";
import { UnpagedListingError, UnstableListingError, walk, type WalkOptions, type WalkResult } from "../../src/sync/walk.ts";
import { rejectedIdentity } from "../../src/upstream/parsing.ts";

/**
 * The healing cursor on an in-memory listing that changes between two page
 * requests the way contract A.3 allows (inserts and removals anywhere), and
 * that deviates the way real upstreams do (pages capped below the limit, a
 * total that is off, a record repeated across two pages, an empty page).
 */

type Listing = string[];

interface Script {
  /** Called before request n (0-based) is answered. */
  before?(request: number, offset: number): void;
  /** Records the upstream serves per page at most, whatever the limit asked. */
  cap?: number;
  /** The total reported for request n, when it should differ from the truth (null: none usable). */
  total?(request: number, actual: number): number | null;
  /** Request n answers a page that starts one record early. */
  repeat?(request: number): boolean;
  /** Request n answers an empty page. */
  empty?(request: number): boolean;
  /** Records served as rejected (their key could not be read), in their place in the page. */
  unplaceable?(record: string): boolean;
}

const LIMIT = 10;

function scripted(listing: () => Listing, script: Script = {}) {
  const offsets: number[] = [];
  const fetch = async (offset: number): Promise<Page<string>> => {
    const request = offsets.length;
    script.before?.(request, offset);
    offsets.push(offset);
    const from = script.repeat?.(request) && offset > 0 ? offset - 1 : offset;
    const served = Math.min(LIMIT, script.cap ?? LIMIT);
    const records = script.empty?.(request) ? [] : listing().slice(from, from + served);
    const actual = listing().length;
    const placeable = (value: string) => !script.unplaceable?.(value);
    return {
      records: records.filter(placeable).map((value) => ({ value, issues: [], raw: value })),
      rejected: records.flatMap((value, position) => (placeable(value) ? [] : [{ stream: "test", reason: "key: missing", payload: { value }, recordKey: null, position }])),
      total: script.total === undefined ? actual : script.total(request, actual),
      offset,
      limit: LIMIT,
      observedAt: new Date(),
    };
  };
  return { fetch, offsets };
}

async function collect(options: Omit<WalkOptions<string>, "key" | "pageSize">): Promise<{ seen: Set<string>; result: WalkResult; fresh: string[]; freshRejected: string[] }> {
  const seen = new Set<string>();
  const fresh: string[] = [];
  const freshRejected: string[] = [];
  const pages = walk({ key: (record) => record, pageSize: LIMIT, ...options });
  let step = await pages.next();
  while (!step.done) {
    for (const record of step.value.page.records) seen.add(record.value);
    fresh.push(...step.value.fresh.map((record) => record.value));
    freshRejected.push(...step.value.freshRejected.map((record) => (record.payload as { value: string }).value));
    step = await pages.next();
  }
  return { seen, result: step.value, fresh, freshRejected };
}

const records = (count: number, prefix = "r") => Array.from({ length: count }, (_, index) => `${prefix}${index}`);

describe("walk", () => {
  it("reads a still listing page by page, each page after the first anchored on the record before it", async () => {
    const listing = records(25);
    const source = scripted(() => listing);
    const { seen, result, fresh } = await collect({ fetch: source.fetch, start: { offset: 0, tail: [] } });
    expect(seen).toEqual(new Set(listing));
    expect(fresh).toEqual(listing);
    expect(result).toEqual({ total: 25, fromStart: true, restarts: 0, vanished: 0, arrived: 0 });
    expect(source.offsets).toEqual([0, 9, 18]);
  });

  it("asks once more after a full last page, since a total alone does not end a listing", async () => {
    const listing = records(20);
    const source = scripted(() => listing);
    const { seen } = await collect({ fetch: source.fetch, start: { offset: 0, tail: [] } });
    expect(seen).toEqual(new Set(listing));
    expect(source.offsets).toEqual([0, 9, 18]);
  });

  it("skips none of the records it started with when others are inserted before the cursor", async () => {
    const listing = records(30);
    const original = [...listing];
    const source = scripted(() => listing, {
      before: (request) => {
        if (request === 1) listing.splice(3, 0, "new-a", "new-b");
      },
    });
    const { seen } = await collect({ fetch: source.fetch, start: { offset: 0, tail: [] } });
    for (const record of original) expect(seen.has(record)).toBe(true);
  });

  it("reports as fresh, once, the records that arrive just before the next page's anchor, placed or not, and only those", async () => {
    const listing = records(25);
    const unplaceable = new Set(["new-x"]);
    const source = scripted(() => listing, {
      before: (request) => {
        // Between r8 and r9 (the next page's anchor), read by no page yet; and one at the front, which shifts r8 (read
        // already) onto the next page, before its anchor.
        if (request === 1) listing.splice(9, 0, "new-a", "new-x");
        if (request === 1) listing.unshift("new-first");
      },
      unplaceable: (record) => unplaceable.has(record),
    });
    const read = { keys: new Set<string>(), unplaced: new Set<string>() };
    const alreadyRead: string[][] = [];
    const fresh: string[] = [];
    const freshRejected: string[] = [];
    const pages = walk({
      fetch: source.fetch,
      key: (record) => record,
      pageSize: LIMIT,
      start: { offset: 0, tail: [] },
      read: { record: (key) => read.keys.has(key), rejected: (identity) => read.unplaced.has(identity) },
    });
    for await (const walked of pages) {
      fresh.push(...walked.fresh.map((record) => record.value));
      freshRejected.push(...walked.freshRejected.map((record) => (record.payload as { value: string }).value));
      alreadyRead.push([...walked.alreadyRead].map((position) => walked.page.records[position]?.value as string));
      for (const record of walked.page.records) read.keys.add(record.value);
      for (const record of walked.page.rejected) read.unplaced.add(rejectedIdentity(record));
    }
    // new-first arrived behind the cursor: not this walk's to find.
    expect(fresh.filter((record) => record.startsWith("new"))).toEqual(["new-a"]);
    expect(freshRejected).toEqual(["new-x"]);
    expect(fresh.sort()).toEqual(records(25).concat("new-a").sort());
    expect(alreadyRead[1]).toEqual(["r8", "r9"]);
  });

  it("without what it read, counts every record before the anchor as read (the tail alone is known)", async () => {
    const listing = records(25);
    const source = scripted(() => listing, {
      before: (request) => {
        if (request === 1) listing.splice(9, 0, "new-a");
      },
    });
    const { fresh } = await collect({ fetch: source.fetch, start: { offset: 0, tail: [] } });
    expect(fresh).not.toContain("new-a");
  });

  it("re-anchors when records before the cursor vanish, so none is skipped", async () => {
    const listing = records(30);
    const source = scripted(() => listing, {
      before: (request) => {
        if (request === 1) listing.splice(2, 3);
      },
    });
    const { seen } = await collect({ fetch: source.fetch, start: { offset: 0, tail: [] } });
    for (const record of listing) expect(seen.has(record)).toBe(true);
  });

  it("counts a record it read that vanished and one that arrived behind the cursor, though together they keep the count", async () => {
    const listing = records(30);
    const source = scripted(() => listing, {
      before: (request) => {
        if (request === 1) listing.splice(2, 1); // r2, read on the first page, goes
        if (request === 3) listing.splice(4, 0, "late"); // behind the cursor: this walk never reads it
      },
    });
    const { seen, result } = await collect({ fetch: source.fetch, start: { offset: 0, tail: [] } });
    expect(seen.size).toBe(listing.length);
    expect(seen.has("late")).toBe(false);
    expect(result).toMatchObject({ total: 30, vanished: 1, arrived: 1 });
  });

  it("counts neither for a page that repeats its predecessor's last record, nor for a total that is off", async () => {
    const listing = records(30);
    const source = scripted(() => listing, { repeat: (request) => request === 1, total: (request, actual) => (request === 2 ? actual + 2 : actual) });
    expect((await collect({ fetch: source.fetch, start: { offset: 0, tail: [] } })).result).toMatchObject({ vanished: 0, arrived: 0 });
  });

  it("reads the record a deletion pulled across the cursor, although the total stayed the same (issue 16, scenario 1)", async () => {
    // L0..L149 in ascending order; after page 1, L9 is deleted and L150 added: the total stays 150.
    const listing = records(150, "L");
    const source = scripted(() => listing, {
      before: (request) => {
        if (request === 1) {
          listing.splice(9, 1);
          listing.push("L150");
        }
      },
    });
    const { seen } = await collect({ fetch: source.fetch, start: { offset: 0, tail: [] } });
    expect(seen.has("L10")).toBe(true);
    for (const record of listing) expect(seen.has(record)).toBe(true);
  });

  it("continues past pages the upstream caps below the limit, and ends at the short page that reaches the total", async () => {
    const listing = records(23);
    const source = scripted(() => listing, { cap: 4 });
    const { seen } = await collect({ fetch: source.fetch, start: { offset: 0, tail: [] } });
    expect(seen).toEqual(new Set(listing));
  });

  it("is not stopped early by a total that is a few short, nor kept going by one that is a few over", async () => {
    const listing = records(33);
    const under = scripted(() => listing, { total: (_request, actual) => actual - 3 });
    expect((await collect({ fetch: under.fetch, start: { offset: 0, tail: [] } })).seen).toEqual(new Set(listing));
    const over = scripted(() => listing, { total: (_request, actual) => actual + 2 });
    expect((await collect({ fetch: over.fetch, start: { offset: 0, tail: [] } })).seen).toEqual(new Set(listing));
    expect(over.offsets.length).toBeLessThanOrEqual(6);
  });

  it("heals a page that repeats the previous page's last record", async () => {
    const listing = records(40);
    const source = scripted(() => listing, { repeat: (request) => request === 2 });
    const { seen, fresh } = await collect({ fetch: source.fetch, start: { offset: 0, tail: [] } });
    expect(seen).toEqual(new Set(listing));
    expect(new Set(fresh)).toEqual(new Set(listing));
  });

  it("without a total, continues past pages capped below the limit and ends only where the listing brings nothing new", async () => {
    const listing = records(23);
    const source = scripted(() => listing, { cap: 4, total: () => null });
    const { seen, result } = await collect({ fetch: source.fetch, start: { offset: 0, tail: [] } });
    expect(seen).toEqual(new Set(listing));
    expect(result).toEqual({ total: null, fromStart: true, restarts: 0, vanished: 0, arrived: 0 });
    // Pages of 4 (each after the first anchored one early) until the anchored page at 22 brings nothing past its anchor.
    expect(source.offsets).toEqual([0, 3, 6, 9, 12, 15, 18, 21, 22]);
  });

  it("says its total is unknown when one page announced none, though the last did", async () => {
    const listing = records(25);
    const source = scripted(() => listing, { total: (request, actual) => (request === 1 ? null : actual) });
    const { seen, result } = await collect({ fetch: source.fetch, start: { offset: 0, tail: [] } });
    expect(seen).toEqual(new Set(listing));
    expect(result.total).toBeNull();
  });

  it("counts no vanished record across a page without a total", async () => {
    const listing = records(30);
    const source = scripted(() => listing, {
      before: (request) => void (request === 1 && listing.splice(2, 1)),
      total: (request, actual) => (request === 1 ? null : actual),
    });
    const { seen, result } = await collect({ fetch: source.fetch, start: { offset: 0, tail: [] } });
    expect(seen).toEqual(new Set(records(30)));
    expect(result).toMatchObject({ total: null, vanished: 0 });
  });

  it("asks again for an empty page while the total promises more", async () => {
    const listing = records(30);
    const source = scripted(() => listing, { empty: (request) => request === 1 });
    const { seen } = await collect({ fetch: source.fetch, start: { offset: 0, tail: [] } });
    expect(seen).toEqual(new Set(listing));
  });

  it("asks again for an empty first page when no total says the listing is empty", async () => {
    const listing = records(30);
    const source = scripted(() => listing, { empty: (request) => request === 0, total: () => null });
    const { seen, result } = await collect({ fetch: source.fetch, start: { offset: 0, tail: [] } });
    expect(seen).toEqual(new Set(listing));
    expect(result).toMatchObject({ total: null, fromStart: true });
  });

  it("resumes from a checkpoint by finding its tail again, and reports only the records past it as fresh", async () => {
    const listing = records(30);
    const source = scripted(() => listing);
    const { fresh, result } = await collect({ fetch: source.fetch, start: { offset: 20, tail: ["r15", "r16", "r17", "r18", "r19"] } });
    expect(fresh).toEqual(records(30).slice(20));
    expect(result.fromStart).toBe(false);
  });

  it("reads a tail that holds nothing new with one request", async () => {
    const listing = records(30);
    const source = scripted(() => listing);
    const { fresh } = await collect({ fetch: source.fetch, start: { offset: 30, tail: ["r25", "r26", "r27", "r28", "r29"] } });
    expect(fresh).toEqual([]);
    expect(source.offsets).toEqual([29]);
  });

  it("starts over from the beginning when the tail is gone from the overlap", async () => {
    const listing = records(30);
    const source = scripted(() => listing);
    const { seen, result } = await collect({ fetch: source.fetch, start: { offset: 20, tail: ["gone"] } });
    expect(seen).toEqual(new Set(listing));
    expect(result).toMatchObject({ fromStart: true, restarts: 1 });
  });

  it("anchors on records that could not be placed, so a run of them at the end of a page costs no restart", async () => {
    const listing = records(25);
    const unplaceable = new Set(records(25).slice(2, 10));
    const source = scripted(() => listing, { unplaceable: (record) => unplaceable.has(record) });
    const { fresh, result } = await collect({ fetch: source.fetch, start: { offset: 0, tail: [] } });
    expect(fresh).toEqual(listing.filter((record) => !unplaceable.has(record)));
    expect(result).toEqual({ total: 25, fromStart: true, restarts: 0, vanished: 0, arrived: 0 });
    expect(source.offsets).toEqual([0, 9, 18]);
  });

  it("reports a record that could not be placed as fresh once, though it ends a page and so anchors the next", async () => {
    const listing = records(25);
    // r9 ends the first page, r18 the second: each comes again as the next page's anchor.
    const unplaceable = new Set(["r5", "r9", "r18"]);
    const source = scripted(() => listing, { unplaceable: (record) => unplaceable.has(record) });
    const { fresh, freshRejected } = await collect({ fetch: source.fetch, start: { offset: 0, tail: [] } });
    expect(freshRejected).toEqual(["r5", "r9", "r18"]);
    expect(fresh).toEqual(listing.filter((record) => !unplaceable.has(record)));
  });

  it("without a total, ends at the anchored page that holds only its anchor, though the anchor could not be placed", async () => {
    const listing = records(23);
    const source = scripted(() => listing, {
      cap: 4,
      total: () => null,
      unplaceable: (record) => record === "r22",
      before: (request) => {
        if (request > 20) throw new Error("the walk keeps asking for its last page");
      },
    });
    const { freshRejected, result } = await collect({ fetch: source.fetch, start: { offset: 0, tail: [] } });
    expect({ freshRejected, total: result.total }).toEqual({ freshRejected: ["r22"], total: null });
    expect(source.offsets).toEqual([0, 3, 6, 9, 12, 15, 18, 21, 22]);
  });

  it("gives up on a listing that never holds still", async () => {
    let generation = 0;
    const source = scripted(() => records(30 + generation, `g${generation}-`), {
      before: () => {
        generation += 1;
      },
    });
    await expect(collect({ fetch: source.fetch, start: { offset: 20, tail: ["x"] }, maxRestarts: 2 })).rejects.toThrow(UnstableListingError);
  });

  it("ends at a page that repeats, whole listing included, when the upstream ignores the offset and serves everything each time", async () => {
    const listing = records(25);
    const offsets: number[] = [];
    const fetch: WalkOptions<string>["fetch"] = async (offset) => {
      offsets.push(offset);
      return { records: listing.map((value) => ({ value, issues: [], raw: value })), rejected: [], total: listing.length, offset, limit: LIMIT, observedAt: new Date() };
    };
    const { seen, fresh } = await collect({ fetch, start: { offset: 0, tail: [] } });
    expect(seen).toEqual(new Set(listing));
    expect(fresh).toEqual(listing);
    expect(offsets).toHaveLength(3);
  });

  it("gives up on an upstream that answers every offset with its first page, rather than walking it forever", async () => {
    const listing = records(25);
    const source = scripted(() => listing, { before: () => undefined });
    const firstPageOnly: WalkOptions<string>["fetch"] = (offset) => source.fetch(0).then((page) => ({ ...page, offset }));
    await expect(collect({ fetch: firstPageOnly, start: { offset: 0, tail: [] } })).rejects.toThrow(UnpagedListingError);
    expect(source.offsets).toHaveLength(3);
  });

  it("takes one page that repeats its predecessor for what records inserted at the front did, and reads on", async () => {
    const listing = records(30);
    const original = [...listing];
    const source = scripted(() => listing, {
      // Nine records arrive at the front before the second page: it holds exactly the first page's records.
      before: (request) => {
        if (request === 1) listing.unshift(...records(9, "new-"));
      },
    });
    const { seen } = await collect({ fetch: source.fetch, start: { offset: 0, tail: [] } });
    for (const record of original) expect(seen.has(record)).toBe(true);
  });
});
