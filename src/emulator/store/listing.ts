import type { ListOrder } from "../options.ts";
import { hash32 } from "../random.ts";
import type { Collection } from "./collection.ts";

/**
 * Ordering and paging of listings. `asc` is the collection's own order,
 * `desc` its reverse, `shuffle` a permutation ranked by a hash of each
 * record's rank key: stable from one page request to the next (so a walk
 * pages coherently), unrelated to creation order, and a record inserted
 * between two requests lands at a pseudo-random place (so offsets shift).
 * A page is sliced out of the collection; the whole listing is never built.
 */

interface Permutation {
  version: number;
  indices: Int32Array;
}

export class Lister {
  private readonly permutations = new WeakMap<Collection<unknown>, Permutation>();

  constructor(private readonly salt: number) {}

  page<T>(collection: Collection<T>, order: ListOrder, offset: number, limit: number): T[] {
    const total = collection.length;
    const end = Math.min(total, offset + limit);
    const page: T[] = [];
    for (let position = offset; position < end; position++) page.push(this.at(collection, order, position));
    return page;
  }

  all<T>(collection: Collection<T>, order: ListOrder): T[] {
    return this.page(collection, order, 0, collection.length);
  }

  private at<T>(collection: Collection<T>, order: ListOrder, position: number): T {
    const items = collection.items;
    const index =
      order === "asc" ? position : order === "desc" ? items.length - 1 - position : (this.permutation(collection)[position] ?? position);
    return items[index] as T;
  }

  private permutation<T>(collection: Collection<T>): Int32Array {
    const cached = this.permutations.get(collection as Collection<unknown>);
    if (cached && cached.version === collection.version) return cached.indices;
    const items = collection.items;
    const ranks = new Uint32Array(items.length);
    for (let index = 0; index < items.length; index++) ranks[index] = hash32(this.salt, collection.rankKey(items[index] as T));
    const indices = Int32Array.from(items.keys()).sort((a, b) => (ranks[a] ?? 0) - (ranks[b] ?? 0) || a - b);
    this.permutations.set(collection as Collection<unknown>, { version: collection.version, indices });
    return indices;
  }
}
