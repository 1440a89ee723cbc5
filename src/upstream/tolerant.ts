import { z } from "zod";
import { epochInstant, looksLikeInstant, parseInstant } from "./instant.ts";
import { parseJson } from "./exact-json.ts";
import { storable } from "./storable-text.ts";

/**
 * Tolerant reading: a record that deviates from its schema in one field keeps
 * every other field. The strict schema is tried first (clean records pay
 * nothing more); a record that fails it is read again field by field, and each
 * field that does not fit becomes either the value read by a safe coercion or
 * null, with a FieldIssue that names the field, the reason and the raw value.
 *
 * Safe coercions (README, "When the upstream deviates"):
 * - an integer sent as a numeric string in decimal notation ("42", "-7",
 *   "1001.0", "1.001e3"), not a fraction ("12.5");
 * - a string sent as a JSON number that is an integer JavaScript reads
 *   exactly (12345), read as its decimal text ("12345"), held to the string's
 *   schema as any text;
 * - a boolean sent as any form PostgreSQL reads ("true"/"false", "t"/"f",
 *   "yes"/"no", "y"/"n", "on"/"off", "1"/"0", in any case) or 1/0;
 * - a date-time in another ISO 8601 form (an offset other than Z, a space for
 *   T, a lower-case t or z, basic format, ` UTC`, no offset), read as the
 *   same instant in UTC, or as Unix epoch seconds or milliseconds (a JSON
 *   number of 2001 to 2286 in either unit);
 * - an enum value the spec does not list is kept as text (the warehouse
 *   stores enums as text), an integer sent instead of a name as its decimal
 *   text;
 * - a single record (an object) where a list of records is documented, read
 *   as a one-item list;
 * - a string longer than its documented maximum, or an integer outside its
 *   documented range but inside the column's, is kept as it came.
 * Anything else that does not fit (null where a value is required, a missing
 * field, a value of the wrong type) is null. A field left out is missing even
 * where the schema takes any JSON value (`suggestions`, `available_columns`):
 * every field of the spec is required, and null is the value that says "none".
 */

export interface FieldIssue {
  /** Dotted path inside the record, array positions included: `schedules.2.replies.0.reply_classification`. */
  path: string;
  reason: string;
  /** The value as it arrived; null when the field was missing. */
  raw: unknown;
}

/** Issues of values that could not be read and stand as null; an issue that kept its value (read another way) is not one. */
const unreadIssues = new WeakSet<FieldIssue>();

/** Whether `issue` is of a value that could not be read and stands as null. */
export function isUnread(issue: FieldIssue): boolean {
  return unreadIssues.has(issue);
}

/**
 * A schema's type as tolerant reading can return it: every field may be null,
 * enums widen to plain strings (unknown values are kept), nested objects and
 * arrays likewise.
 */
export type Lenient<T> = T extends string
  ? string | null
  : T extends number
    ? number | null
    : T extends boolean
      ? boolean | null
      : T extends readonly (infer E)[]
        ? Lenient<E>[] | null
        : T extends object
          ? { [K in keyof T]: Lenient<T[K]> } | null
          : T;

export interface Reading<T> {
  value: Lenient<T>;
  /** Empty for a record that passed its schema as it came. */
  issues: readonly FieldIssue[];
}

const NO_ISSUES: readonly FieldIssue[] = Object.freeze([]);

/** The warehouse column types upstream integers are stored in. */
export type IntegerColumn = "integer" | "bigint";

/**
 * The column an integer schema is stored in, where it is not a bigint (each
 * id is): tolerant reading keeps an integer outside its documented range when
 * its column holds it. test/warehouse/integer-columns.test.ts holds every
 * integer of the schemas to the column the migrations gave it.
 */
export const integerColumn = z.registry<{ column: IntegerColumn }>();

/** What each column holds; a bigint holds every integer JavaScript reads exactly. */
const COLUMN_RANGES: Readonly<Record<IntegerColumn, readonly [number, number]>> = {
  integer: [-2_147_483_648, 2_147_483_647],
  bigint: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};

/** `fieldByField` skips the strict try: a schema's parse leaves out a field named `__proto__`, which this read keeps. */
export function readTolerant<S extends z.ZodType>(schema: S, raw: unknown, fieldByField = false): Reading<z.infer<S>> {
  if (!fieldByField) {
    const strict = schema.safeParse(raw);
    if (strict.success && !lacksAnyValueField(schema, raw)) return { value: strict.data as Lenient<z.infer<S>>, issues: NO_ISSUES };
  }
  const issues: FieldIssue[] = [];
  const value = lenient(schema, raw, "", issues);
  return { value: value as Lenient<z.infer<S>>, issues };
}

/**
 * The issues under `prefix` (a path such as `schedules.2`, or "" for the whole
 * record) as one object keyed by the path relative to it, leaving out what
 * lies below the fields named in `except` (lists of child records that keep
 * their own issues; an issue with the list itself stays). Null when there are
 * none, which is what a clean row stores.
 */
export function issuesAt(
  issues: readonly FieldIssue[],
  prefix = "",
  except: readonly string[] = [],
): Record<string, { reason: string; raw: unknown }> | null {
  if (issues.length === 0) return null;
  const start = prefix === "" ? "" : `${prefix}.`;
  let found: Record<string, { reason: string; raw: unknown }> | null = null;
  for (const issue of issues) {
    if (!issue.path.startsWith(start)) continue;
    const relative = issue.path.slice(start.length);
    if (except.some((subtree) => relative.startsWith(`${subtree}.`))) continue;
    (found ??= {})[relative === "" ? "(record)" : relative] = { reason: issue.reason, raw: issue.raw };
  }
  return found;
}

/** Fields whose schema takes any JSON value (`z.unknown()`): their schema also passes a field left out, which is still missing. */
const anyValueFieldsOf = new WeakMap<z.ZodType, readonly string[]>();

function isAnyValue(schema: unknown): boolean {
  return schema instanceof z.ZodUnknown || schema instanceof z.ZodAny;
}

/** Whether a record that passed its schema left out a field the spec requires but whose schema takes any value (a record's own fields). */
function lacksAnyValueField(schema: z.ZodType, raw: unknown): boolean {
  let fields = anyValueFieldsOf.get(schema);
  if (fields === undefined) {
    fields = schema instanceof z.ZodObject ? Object.entries(schema.shape).filter(([, field]) => isAnyValue(field)).map(([name]) => name) : [];
    anyValueFieldsOf.set(schema, fields);
  }
  return fields.length > 0 && isPlainObject(raw) && fields.some((field) => !(field in raw));
}

function join(path: string, key: string | number): string {
  return path === "" ? String(key) : `${path}.${key}`;
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  const type = typeof value;
  return type === "object" ? "an object" : `a ${type}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Missing and wrong-typed values read as null, with the reason. */
function unreadable(path: string, raw: unknown, expected: string, issues: FieldIssue[]): null {
  const reason = raw === undefined ? "missing" : `expected ${expected}, got ${kindOf(raw)}`;
  const issue = { path, reason, raw: raw === undefined ? null : raw };
  unreadIssues.add(issue);
  issues.push(issue);
  return null;
}

/** A value of another type where any JSON is stored: kept as it came, with the reason. */
function keptAsSent(path: string, raw: unknown, expected: string, issues: FieldIssue[]): unknown {
  issues.push({ path, reason: `expected ${expected}, got ${kindOf(raw)}; kept as it came`, raw });
  return raw;
}

function lenient(schema: z.ZodType, raw: unknown, path: string, issues: FieldIssue[]): unknown {
  if (schema instanceof z.ZodNullable) return raw === null ? null : lenient(schema.unwrap() as z.ZodType, raw, path, issues);
  if (schema instanceof z.ZodOptional) return raw === undefined ? undefined : lenient(schema.unwrap() as z.ZodType, raw, path, issues);
  if (schema instanceof z.ZodObject) return readObject(schema, raw, path, issues);
  if (schema instanceof z.ZodArray) return readArray(schema, raw, path, issues);
  // An object whose fields the spec does not show is stored as any JSON: whatever came in its place is kept too.
  if (schema instanceof z.ZodRecord) return isPlainObject(raw) ? raw : keptAsSent(path, raw, "an object", issues);
  // Any JSON value fits, null included; only a field left out does not.
  if (isAnyValue(schema) && raw === undefined) return unreadable(path, raw, "a value", issues);
  // A leaf that fits its schema as it came needs no second look.
  const strict = schema.safeParse(raw);
  if (strict.success) return strict.data;
  if (schema instanceof z.ZodNumber) return readInteger(schema, raw, path, issues);
  if (schema instanceof z.ZodBoolean) return readBoolean(raw, path, issues);
  if (schema instanceof z.ZodEnum) return readEnum(schema, raw, path, issues);
  if (schema instanceof z.ZodISODateTime) return readDateTime(raw, path, issues);
  if (schema instanceof z.ZodString) return readString(schema, raw, path, issues);
  return unreadable(path, raw, "a value of the documented type", issues);
}

/** The converse of a single item sent for a list (readArray): `contact: [{id: 7, …}]` is that object. */
export function objectAsRead(arrived: unknown): unknown {
  return Array.isArray(arrived) && arrived.length === 1 && isPlainObject(arrived[0]) ? arrived[0] : arrived;
}

function readObject(schema: z.ZodObject, arrived: unknown, path: string, issues: FieldIssue[]): Record<string, unknown> | null {
  const raw = objectAsRead(arrived);
  if (raw !== arrived) issues.push({ path, reason: "a one-item list where an object is documented; read as its item", raw: arrived });
  if (!isPlainObject(raw)) return unreadable(path, raw, "an object", issues);
  // Fields the schema does not know are kept as they came (they end up in _extra).
  const value: Record<string, unknown> = { ...raw };
  for (const [field, fieldSchema] of Object.entries(schema.shape)) {
    value[field] = lenient(fieldSchema as z.ZodType, raw[field], join(path, field), issues);
  }
  return value;
}

/** Whether a list's items are records (objects), which an upstream may send one of alone, unwrapped. */
function holdsObjects(schema: z.ZodArray): boolean {
  let element = schema.element as z.ZodType;
  while (element instanceof z.ZodNullable || element instanceof z.ZodOptional) element = element.unwrap() as z.ZodType;
  // A record documented as a map of fields (a contact list's entry) is a record all the same.
  return element instanceof z.ZodObject || element instanceof z.ZodRecord;
}

/**
 * The items of a list of records as it arrived, and how it deviated: a list; an object keyed by index
 * (`{"0": …, "1": …}`, as some serializers write a list, and `{}` for an empty one) or by each record's id or uid (`{"1001": {"id": 1001, …}}`,
 * a map from id to record); the JSON text of a list; or a single record where a
 * list is documented, which is that list of one. Undefined for anything else. Read as null, the records and
 * all below them would be lost without a trace; each item's own issues sit at `<path>.<index>.…`.
 * Decoded from JSON text, the items are made storable (storable-text.ts), their replacements named in `issues`
 * at `path`: the text's escapes can make characters PostgreSQL cannot store, which the answer's careful read
 * (parsing.ts) saw only as escapes.
 */
export function recordList(raw: unknown, issues: FieldIssue[] = [], path = ""): { items: unknown[]; deviation?: string } | undefined {
  if (Array.isArray(raw)) return { items: raw };
  if (typeof raw === "string") {
    const items = jsonList(raw);
    return items === undefined ? undefined : { items: storable(items, issues, path) as unknown[], deviation: "a list sent as JSON text; read as the list it holds" };
  }
  if (!isPlainObject(raw)) return undefined;
  return keyedList(raw) ?? { items: [raw], deviation: "a single item where a list is documented; read as a one-item list" };
}

/**
 * A list sent as an object keyed by index or by each record's id or uid, as PHP and map serializers write one (and `{}`
 * for an empty one: no record, not one without fields); undefined for any other object.
 */
export function keyedList(raw: unknown): { items: unknown[]; deviation: string } | undefined {
  if (!isPlainObject(raw)) return undefined;
  const keys = Object.keys(raw);
  if (keys.length === 0) return { items: [], deviation: "an empty list sent as {}; read as an empty list" };
  // Integer keys enumerate in ascending order: "0".."n-1" each at its own place is a list.
  if (keys.every((key, index) => key === String(index))) {
    return { items: keys.map((key) => raw[key]), deviation: "a list sent as an object keyed by index; read as that list" };
  }
  // A map from each record's id (`uid` for the records the spec identifies so) to the record, as serializers of such a map write it.
  for (const identity of ["id", "uid"]) {
    if (keys.every((key) => isPlainObject(raw[key]) && String(raw[key][identity]) === key)) {
      return { items: Object.values(raw), deviation: `a list sent as an object keyed by each record's ${identity}; read as that list` };
    }
  }
  // Positions with gaps (what PHP writes of a list it removed items from), each holding a record.
  if (keys.every((key) => /^(0|[1-9]\d*)$/.test(key) && isPlainObject(raw[key]))) {
    return { items: keys.map((key) => raw[key]), deviation: "a list sent as an object keyed by index, with gaps; read as the items it holds, in order" };
  }
  return undefined;
}

function jsonList(text: string): unknown[] | undefined {
  if (!text.trimStart().startsWith("[")) return undefined;
  try {
    const { value } = parseJson(text);
    return Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function readArray(schema: z.ZodArray, raw: unknown, path: string, issues: FieldIssue[]): unknown[] | null {
  const received: ReturnType<typeof recordList> = holdsObjects(schema) ? recordList(raw, issues, path) : Array.isArray(raw) ? { items: raw } : undefined;
  if (received === undefined) return unreadable(path, raw, "an array", issues);
  if (received.deviation !== undefined) issues.push({ path, reason: received.deviation, raw });
  const list = received.items;
  const items = list.map((item, index) => lenient(schema.element as z.ZodType, item, join(path, index), issues));
  const maxItems = schema.def.checks?.find((check) => check._zod.def.check === "max_length")?._zod.def as { maximum?: number } | undefined;
  if (maxItems?.maximum !== undefined && items.length > maxItems.maximum) {
    issues.push({ path, reason: `has ${items.length} items, at most ${maxItems.maximum} documented; kept`, raw });
  }
  return items;
}

/**
 * A number in plain decimal notation, as JSON writes one (an optional sign, digits with an optional fraction, an
 * optional exponent): what an integer sent as text may look like. Not what Number() also reads (hex `0x10`,
 * binary, octal, `Infinity`, empty text), which no upstream means as a decimal integer.
 */
const DECIMAL_NUMBER = /^\s*[+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\s*$/;

/**
 * Whether decimal text (DECIMAL_NUMBER, trimmed) names an integer, told from its digits: the nearest double cannot
 * tell, since `1001.00000000000000001` reads as 1001.
 */
function namesInteger(text: string): boolean {
  const match = /^[+-]?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (match === null) return false;
  const [, whole = "", fraction = "", exponent = "0"] = match;
  const digits = whole + fraction;
  // Where the decimal point falls once the exponent is applied: every digit after it must be 0.
  const point = whole.length + Number(exponent);
  return /^0*$/.test(point <= 0 ? digits : digits.slice(Math.min(point, digits.length)));
}

/** The integer that decimal text names ("42", " 42.0 ", "4.2e1"), or null for text that names none exactly. */
export function integerOfText(text: string): number | null {
  if (!DECIMAL_NUMBER.test(text) || !namesInteger(text.trim())) return null;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : null;
}

function readInteger(schema: z.ZodNumber, raw: unknown, path: string, issues: FieldIssue[]): number | null {
  let value: number;
  let coerced = false;
  let fraction = false;
  if (typeof raw === "number") value = raw;
  else if (typeof raw === "string" && DECIMAL_NUMBER.test(raw)) {
    value = Number(raw);
    fraction = !namesInteger(raw.trim());
    coerced = true;
  } else return unreadable(path, raw, "an integer", issues);
  // Past 2^53 - 1 a number is the nearest double, not the upstream's integer (JSON.parse already rounded a JSON
  // number): two ids would read as one, so such a value is never stored, and a key one cannot place its record.
  if (Math.abs(value) > Number.MAX_SAFE_INTEGER) {
    issues.push({ path, reason: "beyond 2^53 - 1, cannot be read exactly; not stored", raw });
    return null;
  }
  if (fraction || !Number.isInteger(value)) {
    issues.push({ path, reason: "expected an integer, got a fraction; not stored", raw });
    return null;
  }
  const min = schema.minValue ?? -Infinity;
  const max = schema.maxValue ?? Infinity;
  if (value < min || value > max) {
    // The documented range is narrower than the column's: keep what fits the column, say what was wrong.
    const column = integerColumn.get(schema)?.column ?? "bigint";
    const [columnMin, columnMax] = COLUMN_RANGES[column];
    if (value < columnMin || value > columnMax) {
      issues.push({ path, reason: `outside ${min}..${max} and outside its ${column} column; not stored`, raw });
      return null;
    }
    issues.push({ path, reason: `outside the documented range ${min}..${max}; kept`, raw });
    return value;
  }
  if (coerced) issues.push({ path, reason: `integer sent as a string; read as ${value}`, raw });
  return value;
}

/** The forms PostgreSQL itself reads as a boolean (in any case), and 1/0 as numbers. */
const TRUE_FORMS: ReadonlySet<unknown> = new Set(["true", "t", "yes", "y", "on", "1", 1]);
const FALSE_FORMS: ReadonlySet<unknown> = new Set(["false", "f", "no", "n", "off", "0", 0]);

function readBoolean(raw: unknown, path: string, issues: FieldIssue[]): boolean | null {
  if (typeof raw === "boolean") return raw;
  const form = typeof raw === "string" ? raw.trim().toLowerCase() : raw;
  const value = TRUE_FORMS.has(form) ? true : FALSE_FORMS.has(form) ? false : undefined;
  if (value === undefined) return unreadable(path, raw, "a boolean", issues);
  issues.push({ path, reason: `boolean sent as ${JSON.stringify(raw)}; read as ${value}`, raw });
  return value;
}

function readEnum(schema: z.ZodEnum, raw: unknown, path: string, issues: FieldIssue[]): string | null {
  const documented = schema.options.join(", ");
  // A code the upstream sends instead of a name (status 3) is a value of its own, kept as its text as any unknown value.
  if (typeof raw === "number" && Number.isSafeInteger(raw)) {
    issues.push({ path, reason: `a number where one of the documented values (${documented}) is; kept as its decimal text`, raw });
    return String(raw);
  }
  if (typeof raw !== "string") return unreadable(path, raw, "a string", issues);
  if (!(schema.options as unknown[]).includes(raw)) {
    issues.push({ path, reason: `not one of the documented values (${documented}); kept as text`, raw });
  }
  return raw;
}

/** The spec's form of a date-time: UTC, `Z`, any fraction (its precision is judged apart). */
const DOCUMENTED_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

function readDateTime(raw: unknown, path: string, issues: FieldIssue[]): string | null {
  // A number only: a string of digits may as well be a compact date-time (20260501093000) as an epoch value.
  const epoch = typeof raw === "number" ? epochInstant(raw) : null;
  if (epoch !== null) {
    issues.push({ path, reason: `a date-time sent as Unix epoch ${epoch.unit}; read as ${epoch.instant}`, raw });
    return epoch.instant;
  }
  if (typeof raw !== "string") return unreadable(path, raw, "an ISO 8601 date-time", issues);
  const instant = parseInstant(raw);
  if (instant === null) {
    const reason = looksLikeInstant(raw) ? "names no instant of years 1 to 9999 (year 0, past 9999-12-31, or a date that does not exist)" : "not an ISO 8601 date-time";
    issues.push({ path, reason: `${reason}; not stored`, raw });
    return null;
  }
  const rounded = /\.\d{7,}/.test(raw) && !/\.\d{6}0*(?!\d)/.test(raw);
  const documentedForm = DOCUMENTED_DATE_TIME.test(raw);
  const reasons = [...(documentedForm ? [] : ["date-time not in the documented UTC form"]), ...(rounded ? ["more fraction digits than the warehouse holds"] : [])];
  issues.push({ path, reason: `${reasons.join(", and ")}; read as ${instant}${rounded ? " (rounded to the microsecond)" : ""}`, raw });
  return instant;
}

function readString(schema: z.ZodString, raw: unknown, path: string, issues: FieldIssue[]): string | null {
  if (typeof raw === "number") return readNumberAsText(schema, raw, path, issues);
  if (typeof raw !== "string") return unreadable(path, raw, "a string", issues);
  return readNonconformingText(schema, raw, raw, path, issues);
}

/**
 * A number where a string is documented (an all-digit uid sent as 12345): an integer JavaScript reads exactly is
 * read as its decimal text, which is what the upstream meant, so a key still places its record. Any other number
 * is not stored: past 2^53 - 1 JSON.parse has already rounded it, and a fraction's text as sent cannot be told
 * (1.50 and 1.5 read alike), so either could make two keys one.
 */
function readNumberAsText(schema: z.ZodString, raw: number, path: string, issues: FieldIssue[]): string | null {
  if (!Number.isSafeInteger(raw)) {
    const why = Number.isInteger(raw) ? "beyond 2^53 - 1, its digits cannot be read exactly" : "not an integer, its text as sent cannot be told";
    issues.push({ path, reason: `a number where a string is documented, ${why}; not stored`, raw });
    return null;
  }
  const text = String(raw);
  // The text is held to the same schema as any string, so the reader keeps only what the schema would.
  if (!schema.safeParse(text).success) return readNonconformingText(schema, text, raw, path, issues);
  issues.push({ path, reason: "a number where a string is documented; read as its decimal text", raw });
  return text;
}

/** Text that breaks its documented length or format; `raw` is what arrived (the number `text` was read from, if one). */
function readNonconformingText(schema: z.ZodString, text: string, raw: unknown, path: string, issues: FieldIssue[]): string | null {
  if (schema.maxLength !== null && text.length > schema.maxLength) {
    issues.push({ path, reason: `longer than the documented ${schema.maxLength} characters; kept`, raw });
    return text;
  }
  // A string that breaks its format (a time of day) would not fit its column's type.
  const reasons = schema.safeParse(text).error?.issues.map((issue) => issue.message).join("; ") ?? "does not match its documented format";
  issues.push({ path, reason: `${reasons}; not stored`, raw });
  return null;
}
