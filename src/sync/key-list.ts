/** Keys a verification line names: how many there are, and the first few in order. */
export interface KeyList {
  count: number;
  first: string[];
}

const FIRST_KEYS = 5;

export function keyList(keys: Iterable<string>): KeyList {
  const sorted = [...keys].sort();
  return { count: sorted.length, first: sorted.slice(0, FIRST_KEYS) };
}
