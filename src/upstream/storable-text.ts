import { UnroundedNumber } from "./exact-json.ts";
import type { FieldIssue } from "./tolerant.ts";

/**
 * Text PostgreSQL cannot store. Its text and jsonb types refuse the NUL
 * character (U+0000) outright, and jsonb refuses a lone UTF-16 surrogate
 * (JSON.stringify writes it as an escape; as text it would silently become
 * U+FFFD on the wire). Both are valid in JSON, so a real upstream can send
 * them, and one of them anywhere in a record (a reply's body, the name of a
 * field nobody documented, a payload set aside) would fail the statement that
 * writes its whole page. So every record is made storable before it is read:
 * each such character becomes U+FFFD, and each field (or field name) that held
 * one is named, its raw value with the characters written out as `\uXXXX`.
 * A key field that held one cannot place its record (parsing.ts): the key
 * stored would not be the upstream's.
 *
 * A number a double cannot hold as sent (exact-json.ts) becomes the text it
 * was sent as, named the same way: jsonb keeps it exactly, and a reader sees
 * the digits the upstream sent (a string field's uid as its text), never the
 * nearest double.
 *
 * An answer whose bytes were not UTF-8 comes here with each such byte as a
 * lone surrogate (body-text.ts), so it is named the same way.
 */

const REASON =
  "holds characters PostgreSQL cannot store (NUL, lone surrogates; a byte of an answer that was not UTF-8 reads as the lone surrogate \\udcXX, XX the byte); read with U+FFFD in their place, written as \\uXXXX in raw";
const NAME_REASON = `its name ${REASON}`;
const UNROUNDED_REASON = "a number with more digits (or a larger exponent) than a double holds exactly; read as the text it was sent as";

/** A cheap first look: NUL or any surrogate (pairs are fine, but rare enough to look at twice). */
// eslint-disable-next-line no-control-regex -- NUL is what this looks for
const SUSPECT = /[\u0000\ud800-\udfff]/;
/** NUL, a high surrogate not followed by a low one, a low surrogate not preceded by a high one. */
// eslint-disable-next-line no-control-regex -- NUL is what this looks for
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function hasUnstorable(text: string): boolean {
  if (!SUSPECT.test(text)) return false;
  UNSTORABLE.lastIndex = 0;
  return UNSTORABLE.test(text);
}

function replaced(text: string): string {
  return text.replace(UNSTORABLE, "\uFFFD");
}

function writtenOut(text: string): string {
  return text.replace(UNSTORABLE, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * Whether the JSON text of an answer may hold such characters. JSON carries
 * them only as escapes (a raw NUL is not valid JSON, and text decoded from
 * UTF-8 holds no lone surrogate), so an answer without a `\u0000` or a
 * `\uD800`-`\uDFFF` escape holds none, and its records need no walk: one scan
 * of the text costs a fraction of walking every value. A surrogate pair sent
 * as escapes (an upstream that escapes all non-ASCII) only costs the walk.
 */
export function mayHoldUnstorable(jsonText: string): boolean {
  return UNSTORABLE_ESCAPE.test(jsonText);
}

const UNSTORABLE_ESCAPE = /\\u(?:0000|[dD][89abcdefABCDEF])/;

/** `text` with each character PostgreSQL cannot store replaced by U+FFFD (an upstream's error message, kept with its run). */
export function storableString(text: string): string {
  return hasUnstorable(text) ? replaced(text) : text;
}

/** Whether an issue says a field held text that could not be stored as it came. */
export function isUnstorableText(issue: FieldIssue): boolean {
  return issue.reason === REASON;
}

function join(path: string, key: string | number): string {
  return path === "" ? String(key) : `${path}.${key}`;
}

/**
 * `raw` with every unstorable character replaced, and an issue per field that
 * held one. A value that needs nothing is returned as it is, unchanged and
 * uncopied: the common case costs one scan of its strings.
 */
export function storable(raw: unknown, issues: FieldIssue[], path = ""): unknown {
  if (typeof raw === "string") {
    if (!hasUnstorable(raw)) return raw;
    issues.push({ path, reason: REASON, raw: writtenOut(raw) });
    return replaced(raw);
  }
  if (raw instanceof UnroundedNumber) {
    issues.push({ path, reason: UNROUNDED_REASON, raw: raw.text });
    return raw.text;
  }
  if (Array.isArray(raw)) {
    let copy: unknown[] | undefined;
    for (let index = 0; index < raw.length; index += 1) {
      const item: unknown = raw[index];
      const value = storable(item, issues, join(path, index));
      if (value !== item) (copy ??= [...raw])[index] = value;
    }
    return copy ?? raw;
  }
  if (typeof raw !== "object" || raw === null) return raw;
  const record = raw as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (const key of Object.keys(record)) {
    const badName = hasUnstorable(key);
    const name = badName ? replaced(key) : key;
    if (badName) issues.push({ path: join(path, name), reason: NAME_REASON, raw: writtenOut(key) });
    const item = record[key];
    const value = storable(item, issues, join(path, name));
    if (!badName && value === item && copy === undefined) continue;
    if (copy === undefined) {
      // Rebuilt in the record's order, up to the first field that changes; the rest follow below.
      copy = {};
      for (const earlier of Object.keys(record)) {
        if (earlier === key) break;
        put(copy, earlier, record[earlier]);
      }
    }
    put(copy, name, value);
  }
  return copy ?? raw;
}

/** An own field, also one named `__proto__` (JSON.parse makes it an own field; plain assignment would set the prototype). */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}
