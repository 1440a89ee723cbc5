/**
 * Seeded pseudo-randomness. Everything the emulator invents (data, simulated
 * activity, faults, shuffled orders) comes from here, so one seed always gives
 * the same bytes.
 */

/** A 32-bit avalanche mix (murmur3's finaliser): nearby inputs give unrelated outputs. */
function mix32(value: number): number {
  let h = value >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Folds one more number into a hash: hash32(a, b) is hashStep(hashStep(hash32(), a), b), without an array per call. */
export function hashStep(hash: number, part: number): number {
  return mix32(hash ^ mix32(part | 0) ^ Math.floor(part / 0x1_0000_0000));
}

/** Combines numbers into one well-mixed 32-bit value. */
export function hash32(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const part of parts) h = hashStep(h, part);
  return h;
}

/** A 32-bit hash of a text (FNV-1a over UTF-16 code units), for identities that are strings. */
export function hashText(text: string): number {
  let h = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) h = Math.imul(h ^ text.charCodeAt(index), 0x01000193);
  return h >>> 0;
}

/** mulberry32: tiny, fast and good enough for test data. */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = hash32(seed) | 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** Integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error("pick from an empty list");
    return item;
  }

  /** Picks by relative weights: `{ a: 3, b: 1 }` gives a three times out of four. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as [K, number][];
    const total = entries.reduce((sum, [, weight]) => sum + weight, 0);
    let roll = this.next() * total;
    for (const [key, weight] of entries) {
      roll -= weight;
      if (roll < 0) return key;
    }
    const last = entries.at(-1);
    if (!last) throw new Error("weighted pick from no weights");
    return last[0];
  }

  /** Exponentially distributed with the given mean: waiting times between events. */
  exponential(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }

  /** A distinct sample of `count` items, in their original order. */
  sample<T>(items: readonly T[], count: number): T[] {
    const chosen = new Set<number>();
    const wanted = Math.min(count, items.length);
    while (chosen.size < wanted) chosen.add(Math.floor(this.next() * items.length));
    return [...chosen].sort((a, b) => a - b).map((index) => items[index] as T);
  }
}
