/**
 * One cached read per query shape (`?runs=`, `?days=`): a tab that asks for
 * its own shape refreshes from a cache of its own instead of reading the
 * warehouse on every refresh. A few shapes are kept, the least recently used
 * dropped first, so odd queries cannot grow the process.
 */
const MAX_SHAPES = 8;

export function perShape<T>(make: (shape: string) => T): (shape: string) => T {
  const made = new Map<string, T>();
  return (shape) => {
    const value = made.get(shape) ?? make(shape);
    // Re-inserted, so that the first key is always the least recently used.
    made.delete(shape);
    made.set(shape, value);
    if (made.size > MAX_SHAPES) made.delete(made.keys().next().value as string);
    return value;
  };
}
