/**
 * Instants as the warehouse keeps them: UTC, microsecond precision, one text
 * form (`2026-05-01T10:00:00.123456Z`). PostgreSQL's timestamptz keeps
 * microseconds and a JavaScript Date only milliseconds, so date-times travel
 * from the upstream to the warehouse as text in this form and are never
 * round-tripped through Date: two opens at `.123456` and `.123789` stay two.
 *
 * The canonical form is also the form of every timestamp inside a natural key,
 * so a key built from a record and a key read back from the warehouse (see
 * INSTANT_SQL_FORMAT) compare as equal strings.
 */

/**
 * ISO 8601 date-times in the forms real upstreams send: extended or basic
 * format, `T` or a space between date and time, any number of fraction digits,
 * and `Z`, `±HH:MM`, `±HHMM`, `±HH`, ` UTC`, ` GMT` (as Ruby's Time#to_s
 * writes UTC) or no offset (read as UTC). `T` and `Z` may be lower case, as
 * RFC 3339 allows (the strict schema takes only upper case, so either is still
 * named as not the documented form).
 */
const ISO_8601 =
  /^(\d{4})-?(\d{2})-?(\d{2})(?:[Tt ](\d{2}):?(\d{2})(?::?(\d{2})(?:[.,](\d+))?)?)?\s*(Z|z|UTC|GMT|[+-]\d{2}(?::?\d{2})?)?$/;

/** to_char() format that renders a timestamptz (at time zone 'UTC') in the canonical form. */
export const INSTANT_SQL_FORMAT = 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"';

/** Whether `text` has the form of an ISO 8601 date-time, whether or not it names an instant parseInstant can read. */
export function looksLikeInstant(text: string): boolean {
  return ISO_8601.test(text.trim());
}

/** The canonical text of an ISO 8601 date-time, or null when `text` is not one (or names no real instant, or one outside years 1 to 9999). */
export function parseInstant(text: string): string | null {
  const plain = plainUtc(text);
  if (plain !== undefined) return plain;
  const match = ISO_8601.exec(text.trim());
  if (match === null) return null;
  const [, year, month, day, hour = "00", minute = "00", second = "00", fraction = "", offset = "Z"] = match;
  const fields = [year, month, day, hour, minute, second].map(Number) as [number, number, number, number, number, number];
  const [y, mo, d, h, mi, s] = fields;
  if (mo < 1 || mo > 12 || d < 1 || h > 24 || mi > 59 || s > 60) return null;
  // 24:00 is the end of the day, and nothing past it; a second 60 is a leap second, which ends a UTC day.
  if (h === 24 && (mi > 0 || s > 0 || /[1-9]/.test(fraction))) return null;
  const midnight = utcDay(y, mo, d);
  if (midnight === null) return null;
  const wall = midnight + ((h * 60 + mi) * 60 + s) * 1000;
  const offsetMinutes = offsetOf(offset);
  if (offsetMinutes === null) return null;
  if (s === 60 && (((h * 60 + mi - offsetMinutes) % 1440) + 1440) % 1440 !== 1439) return null;
  // PostgreSQL rounds to microseconds; digits past the sixth are rounded the same way.
  let micros = Math.round(Number(`0.${fraction || "0"}`) * 1e6);
  let seconds = (wall - offsetMinutes * 60_000) / 1000;
  if (micros === 1_000_000) {
    micros = 0;
    seconds += 1;
  }
  const base = new Date(seconds * 1000).toISOString(); // YYYY-MM-DDTHH:MM:SS.000Z
  // Year 0 itself, or an offset or a rounded fraction that carries a date of year 1 or 9999 out of that range:
  // toISOString() then writes year 0 or a six-digit year (+010000), forms PostgreSQL refuses, so such an instant is
  // no more readable than a date that does not exist.
  if (base.length !== 24 || base.startsWith("0000")) return null;
  return `${base.slice(0, 19)}.${String(micros).padStart(6, "0")}Z`;
}

/**
 * The canonical text of a date-time in the plain UTC form
 * (`YYYY-MM-DDTHH:MM:SS`, up to six fraction digits, `Z`), by padding its
 * fraction. Nearly every value arrives in this form, several per record, so
 * it is read by character codes: a regular expression's match and the
 * general path's Date cost several strings per value. Anything unusual (a
 * leap second, 24:00, a date that does not exist, year 0) is left to the
 * general path.
 */
function plainUtc(text: string): string | undefined {
  const length = text.length;
  if (length < 20 || length > 27 || length === 21 || text.charCodeAt(length - 1) !== 90 /* Z */) return undefined;
  for (let index = 0; index < 19; index += 1) {
    const expected = PLAIN_UTC_SEPARATORS[index];
    const code = text.charCodeAt(index);
    if (expected === DIGIT ? !isDigit(code) : code !== expected) return undefined;
  }
  if (length > 20) {
    if (text.charCodeAt(19) !== 46 /* . */) return undefined;
    for (let index = 20; index < length - 1; index += 1) if (!isDigit(text.charCodeAt(index))) return undefined;
  }
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 2);
  const day = digitsAt(text, 8, 2);
  const valid = year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month) && digitsAt(text, 11, 2) <= 23 && digitsAt(text, 14, 2) <= 59 && digitsAt(text, 17, 2) <= 59;
  if (!valid) return undefined;
  if (length === 27) return text;
  return length === 20 ? `${text.slice(0, 19)}.000000Z` : `${text.slice(0, length - 1)}${"00000".slice(length - 22)}Z`;
}

const DIGIT = -1;
/** What each of the first 19 characters of the plain UTC form must be: a digit, or the separator's code. */
const PLAIN_UTC_SEPARATORS = [DIGIT, DIGIT, DIGIT, DIGIT, 45, DIGIT, DIGIT, 45, DIGIT, DIGIT, 84, DIGIT, DIGIT, 58, DIGIT, DIGIT, 58, DIGIT, DIGIT];

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

function digitsAt(text: string, start: number, count: number): number {
  let value = 0;
  for (let index = start; index < start + count; index += 1) value = value * 10 + text.charCodeAt(index) - 48;
  return value;
}

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * The instant a UTC calendar date starts, or null when the date does not exist.
 * Date.UTC would read years 0 to 99 as 1900 to 1999 (Go's zero time,
 * 0001-01-01, would become 1901), so the year is set on its own; a date that
 * does not exist (2026-02-30) rolls over and fails the round trip.
 */
function utcDay(year: number, month: number, day: number): number | null {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day ? date.getTime() : null;
}

function offsetOf(offset: string): number | null {
  if (offset === "Z" || offset === "z" || offset === "UTC" || offset === "GMT") return 0;
  const digits = offset.slice(1).replace(":", "");
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
  if (hours > 23 || minutes > 59) return null;
  return (offset.startsWith("-") ? -1 : 1) * (hours * 60 + minutes);
}

/**
 * Unix epoch values an upstream may send for a date-time (Date.now() writes milliseconds, most Unix tools
 * seconds), told apart by magnitude: 10^9 to 10^10 seconds or 10^12 to 10^13 milliseconds, both 2001-09-09 to
 * 2286-11-20. Anything else (a smaller, larger or in-between number) names no instant whose unit is certain.
 */
export function epochInstant(value: number): { instant: string; unit: "seconds" | "milliseconds" } | null {
  const unit = value >= 1e9 && value < 1e10 ? "seconds" : value >= 1e12 && value < 1e13 ? "milliseconds" : undefined;
  if (unit === undefined) return null;
  const micros = Math.round(unit === "seconds" ? value * 1e6 : value * 1e3);
  const millis = Math.floor(micros / 1000);
  const base = new Date(millis).toISOString();
  const fraction = String((millis % 1000) * 1000 + (micros % 1000)).padStart(6, "0");
  return { instant: `${base.slice(0, 19)}.${fraction}Z`, unit };
}
