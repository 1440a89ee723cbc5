import { describe, expect, it } from "vitest";
import type { Page } from "../../src/upstream/client.ts";
import { UnstableListingError, walk, type WalkOptions, type WalkResult } from "../../src/sync/walk.ts";

/**
 * The healing cursor on an in-memory listing that changes between two page
 * requests the way contract A.3 allows: inserts anywhere, removals anywhere.
 */

type Listing = string[];

function pagedFrom(listing: () => Listing, pageSize: number, beforeEach?: (request: number, offset: number) => void) {
  let requests = 0;
  const fetch = async (offset: number): Promise<Page<string>> => {
    beforeEach?.(requests, offset);
    requests += 1;
    const records = listing().slice(offset, offset + pageSize);
    return { records, rejected: [], total: listing().length, offset, limit: pageSize };
  };
  return { fetch, requests: () => requests };
}

async function collect(options: WalkOptions<string>): Promise<{ seen: Set<string>; result: WalkResult; fresh: string[] }> {
  const seen = new Set<string>();
  const fresh: string[] = [];
  const pages = walk(options);
  let step = await pages.next();
  while (!step.done) {
    for (const record of step.value.page.records) seen.add(record);
    fresh.push(...step.value.fresh);
    step = await pages.next();
  }
  return { seen, result: step.value, fresh };
}

const records = (count: number, prefix = "r") => Array.from({ length: count }, (_, index) => `${prefix}${index}`);

describe("walk", () => {
  it("reads a still listing page by page, once", async () => {
    const listing = records(25);
    const source = pagedFrom(() => listing, 10);
    const { seen, result } = await collect({ fetch: source.fetch, key: (record) => record, start: { offset: 0, tail: [] } });
    expect(seen).toEqual(new Set(listing));
    expect(result).toEqual({ total: 25, fromStart: true, restarts: 0 });
    expect(source.requests()).toBe(3);
  });

  it("skips none of the records it started with when others are inserted before the cursor", async () => {
    const listing = records(30);
    const original = [...listing];
    const source = pagedFrom(() => listing, 10, (request) => {
      if (request === 1) listing.splice(3, 0, "new-a", "new-b");
    });
    const { seen } = await collect({ fetch: source.fetch, key: (record) => record, start: { offset: 0, tail: [] } });
    for (const record of original) expect(seen.has(record)).toBe(true);
  });

  it("re-anchors when records before the cursor vanish, so none is skipped", async () => {
    const listing = records(30);
    const source = pagedFrom(() => listing, 10, (request) => {
      if (request === 1) listing.splice(2, 3);
    });
    const { seen } = await collect({ fetch: source.fetch, key: (record) => record, start: { offset: 0, tail: [] }, overlap: 5 });
    for (const record of listing) expect(seen.has(record)).toBe(true);
  });

  it("resumes from a checkpoint by finding its tail again, and reports only the records past it as fresh", async () => {
    const listing = records(30);
    const source = pagedFrom(() => listing, 10);
    const { fresh, result } = await collect({
      fetch: source.fetch,
      key: (record) => record,
      start: { offset: 20, tail: ["r15", "r16", "r17", "r18", "r19"] },
    });
    expect(fresh).toEqual(records(30).slice(20));
    expect(result.fromStart).toBe(false);
  });

  it("starts over from the beginning when the tail is gone from the overlap", async () => {
    const listing = records(30);
    const source = pagedFrom(() => listing, 10);
    const { seen, result } = await collect({ fetch: source.fetch, key: (record) => record, start: { offset: 20, tail: ["gone"] } });
    expect(seen).toEqual(new Set(listing));
    expect(result).toMatchObject({ fromStart: true, restarts: 1 });
  });

  it("gives up on a listing that never holds still", async () => {
    let generation = 0;
    const source = pagedFrom(() => records(30 + generation, `g${generation}-`), 10, () => {
      generation += 1;
    });
    await expect(collect({ fetch: source.fetch, key: (record) => record, start: { offset: 20, tail: ["x"] }, maxRestarts: 2 })).rejects.toThrow(
      UnstableListingError,
    );
  });
});
