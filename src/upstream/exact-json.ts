import { isSafeNumber, parse } from "lossless-json";

/**
 * A JSON number a double cannot hold as it was sent: an integer past 2^53 - 1
 * (another system's id), more significant digits than a double keeps, or past
 * its range. JSON.parse rounds such a number without a word (and reads 1e400
 * as Infinity, which JSON then writes as null), so an answer that may hold one
 * is parsed keeping the number's text. The careful read of its records
 * (storable-text.ts) turns each such number into that text and names the
 * field: a deviation is kept and said, never rounded away.
 */
export class UnroundedNumber {
  constructor(readonly text: string) {}

  /** Written as its text wherever it is written before the careful read replaces it. */
  toJSON(): string {
    return this.text;
  }
}

/**
 * A cheap first look for such a number: a field whose value is a number of
 * sixteen or more digits and points, or with a three-digit exponent. Text
 * inside a string can match too; that only costs the slower parse. A long
 * number only ever inside a list (`[12345678901234567890]`) in an answer
 * that holds none as a field's value is not seen: looking after every `[` and
 * `,` too costs twice the time on every answer (a third of JSON.parse's).
 */
const LONG_NUMBER = /":\s*-?(?:\d[\d.]{15}|[\d.]+[eE][+-]?\d{3})/;

function readNumber(text: string): number | UnroundedNumber {
  return isSafeNumber(text) ? Number(text) : new UnroundedNumber(text);
}

/**
 * The value of an answer's JSON text, and whether it was read keeping long
 * numbers (then it may hold UnroundedNumber values, and its records need the
 * careful read). Invalid JSON throws as JSON.parse throws.
 */
export function parseJson(text: string): { value: unknown; exact: boolean } {
  if (!LONG_NUMBER.test(text)) return { value: JSON.parse(text) as unknown, exact: false };
  try {
    return { value: parse(text, undefined, readNumber), exact: true };
  } catch {
    // lossless-json also refuses a field named twice with two values, which JSON.parse reads as the last one:
    // such an answer is read as JSON.parse reads it (and text that is not JSON fails there, as any answer's does).
    return { value: JSON.parse(text) as unknown, exact: false };
  }
}
