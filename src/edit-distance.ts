/**
 * The optimal string alignment distance: inserting, deleting or replacing a
 * character, or swapping two neighbours, each count one, which are the typos
 * a hand makes ("RATE_LIMT", "RATE_LIMTI").
 */
export function editDistance(a: string, b: string): number {
  // distances[i][j]: between the first i characters of a and the first j of b; row and column 0 are i and j.
  const distances = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => Math.max(i, j)));
  const at = (i: number, j: number) => distances[i]?.[j] ?? 0;
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      (distances[i] as number[])[j] = best;
    }
  }
  return at(a.length, b.length);
}

/** The candidate nearest to `name` if it is at most `within` edits away; the first of equals. */
export function nearest(name: string, candidates: readonly string[], within: number): string | undefined {
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(name, candidate);
    if (distance <= within && (best === undefined || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}
