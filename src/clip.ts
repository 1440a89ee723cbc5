/**
 * Text shortened for people to read: the status page, the commands' tables,
 * the upstream's error excerpts. Counted and cut in characters as a reader
 * sees them (grapheme clusters), never in UTF-16 units: a cut between the two
 * halves of a surrogate pair leaves a lone surrogate, which a page shows as
 * U+FFFD and PostgreSQL refuses in jsonb.
 */

const graphemes = new Intl.Segmenter("en", { granularity: "grapheme" });

/** At most `max` characters: the start, then an ellipsis. */
export function clip(text: string, max: number): string {
  // No more UTF-16 units than `max` means no more characters either: most texts end here, unsegmented.
  if (text.length <= max) return text;
  let count = 0;
  let cut = 0;
  // Segmented lazily: a long text is read only up to the cut.
  for (const { index } of graphemes.segment(text)) {
    if (count === max - 1) cut = index;
    if (count === max) return `${text.slice(0, cut)}…`;
    count += 1;
  }
  return text;
}

/**
 * At most `max` characters: the start and the end around an ellipsis
 * (`cmp_a1b2…x9y8z7`), for identifiers, whose end tells them apart as much as
 * their start does.
 */
export function clipMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const characters = Array.from(graphemes.segment(text), ({ segment }) => segment);
  if (characters.length <= max) return text;
  const tail = Math.floor((max - 1) / 2);
  const head = max - 1 - tail;
  return `${characters.slice(0, head).join("")}…${characters.slice(characters.length - tail).join("")}`;
}
