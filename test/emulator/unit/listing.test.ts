import { describe, expect, it } from "vitest";
import { Collection } from "../../../src/emulator/store/collection.ts";
import { Lister } from "../../../src/emulator/store/listing.ts";

function numbers(count: number): Collection<number> {
  const collection = new Collection<number>((value) => value);
  for (let value = 1; value <= count; value++) collection.push(value);
  return collection;
}

function walk(lister: Lister, collection: Collection<number>, order: "asc" | "desc" | "shuffle", limit: number): number[] {
  const seen: number[] = [];
  for (let offset = 0; offset < collection.length; offset += limit) seen.push(...lister.page(collection, order, offset, limit));
  return seen;
}

describe("Lister", () => {
  const lister = new Lister(9);

  it("asc is the collection's order and desc its reverse", () => {
    const collection = numbers(25);
    expect(walk(lister, collection, "asc", 7)).toEqual(collection.items);
    expect(walk(lister, collection, "desc", 7)).toEqual([...collection.items].reverse());
  });

  it("shuffle is a permutation unlike creation order, identical from one walk to the next", () => {
    const collection = numbers(50);
    const first = walk(lister, collection, "shuffle", 7);
    expect([...first].sort((a, b) => a - b)).toEqual(collection.items);
    expect(first).not.toEqual(collection.items);
    expect(walk(lister, collection, "shuffle", 3)).toEqual(first);
  });

  it("a record inserted between two pages lands inside the shuffled order, the rest keep their relative order", () => {
    const collection = numbers(50);
    const before = walk(lister, collection, "shuffle", 10);
    collection.push(51);
    const after = walk(lister, collection, "shuffle", 10);
    expect(after.filter((value) => value !== 51)).toEqual(before);
    expect(after.indexOf(51)).toBeLessThan(50);
  });

  it("an offset past the end gives an empty page", () => {
    expect(lister.page(numbers(5), "shuffle", 5, 10)).toEqual([]);
    expect(lister.page(numbers(5), "desc", 12, 10)).toEqual([]);
  });

  it("another salt shuffles otherwise", () => {
    const collection = numbers(30);
    expect(walk(new Lister(10), collection, "shuffle", 30)).not.toEqual(walk(lister, collection, "shuffle", 30));
  });
});
