import { z } from "zod";
import { PARAMS } from "./endpoints.ts";
import { dayName, unsubLinkType, updatableSchedulingStrategy } from "./enums.ts";

/**
 * Request bodies and query strings (spec 4.1–4.4, contract A.1, A.3, A.5).
 *
 * Bodies come in two encodings. JSON carries real types; form-urlencoded and
 * multipart carry strings ("true", "42", repeated keys or JSON text for
 * arrays). Each body schema is built by a factory that takes the encoding, so
 * both share every rule and differ only in how a raw value is read.
 */

export type BodyEncoding = "json" | "form";

const INT32_MAX = 2_147_483_647;
const INT32_MIN = -2_147_483_648;
const MIN_SENDING_WINDOW_SECONDS = 3 * 3600;

function fromFormBoolean(value: unknown): unknown {
  if (value === "true") return true;
  if (value === "false") return false;
  return value;
}

function fromFormNumber(value: unknown): unknown {
  return typeof value === "string" && /^-?\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : value;
}

function fromFormArray(value: unknown): unknown {
  if (Array.isArray(value)) return value;
  if (typeof value !== "string") return value;
  const text = value.trim();
  if (text === "") return [];
  if (text.startsWith("[")) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return value;
    }
  }
  return text.split(",").map((item) => item.trim());
}

function fromFormNullable(value: unknown): unknown {
  return value === "" || value === "null" ? null : value;
}

/** Field readers for one encoding: identity for JSON, string coercion for forms. */
function fieldsFor(encoding: BodyEncoding) {
  const form = encoding === "form";
  const boolean = () => (form ? z.preprocess(fromFormBoolean, z.boolean()) : z.boolean());
  const integer = (min: number, max: number) => {
    const base = z.number().int().min(min).max(max);
    return form ? z.preprocess(fromFormNumber, base) : base;
  };
  /**
   * The body's arrays are sets (days skipped, domains sent from). Spec 4.3 sets
   * no rule against naming an item twice ("array of day names, at most 6
   * items", "array of integer"), and contract A.5 validates exactly as it says,
   * so a repeated item is accepted and kept once, where it first appears. The
   * item limit counts the array as sent.
   */
  const array = <T extends z.ZodType>(item: T, maxItems?: number) => {
    const bounded = maxItems === undefined ? z.array(item) : z.array(item).max(maxItems);
    const base = bounded.transform((items) => [...new Set(items)]);
    return form ? z.preprocess(fromFormArray, base) : base;
  };
  const nullable = <T extends z.ZodType>(inner: T) => (form ? z.preprocess(fromFormNullable, inner.nullable()) : inner.nullable());
  /** Nested objects in forms may arrive as JSON text. */
  const object = <T extends z.ZodType>(inner: T) =>
    form
      ? z.preprocess((value) => {
          if (typeof value !== "string") return value;
          try {
            return JSON.parse(value) as unknown;
          } catch {
            return value;
          }
        }, inner)
      : inner;
  return { boolean, integer, array, nullable, object };
}

const timeOfDay = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d:[0-5]\d$/, "must be HH:MM:SS on a 24-hour clock");

function secondsOfDay(time: string): number {
  const [hours = 0, minutes = 0, seconds = 0] = time.split(":").map(Number);
  return hours * 3600 + minutes * 60 + seconds;
}

/** A sending window may run past midnight (22:00 to 02:00 is four hours), so its length is measured forwards. */
function sendingWindowSeconds(fromTime: string, toTime: string): number {
  return (secondsOfDay(toTime) - secondsOfDay(fromTime) + 86_400) % 86_400;
}

/**
 * The IANA database's zone names without an area, all defined in its
 * `etcetera` and `backward` files (tzdata 2025b, as /usr/share/zoneinfo lists
 * them; `Factory`, from the `factory` file, names no zone and the runtime
 * refuses it). The runtime also takes ICU's and Java's legacy abbreviations
 * (PST, IST, JST, CST, AET, BST), which the database does not define, so a
 * name without an area is an IANA name only when it is one of these.
 */
const AREALESS_IANA_ZONES: ReadonlySet<string> = new Set([
  "UTC", "UCT", "GMT", "GMT0", "GMT+0", "GMT-0", "Greenwich", "Universal", "Zulu",
  "EST", "MST", "HST", "EST5EDT", "CST6CDT", "MST7MDT", "PST8PDT", "CET", "EET", "MET", "WET",
  "Cuba", "Egypt", "Eire", "GB", "GB-Eire", "Hongkong", "Iceland", "Iran", "Israel", "Jamaica", "Japan",
  "Kwajalein", "Libya", "NZ", "NZ-CHAT", "Navajo", "PRC", "Poland", "Portugal", "ROC", "ROK",
  "Singapore", "Turkey", "W-SU",
]);

/**
 * Names with an area that ICU still resolves although the IANA database removed
 * them: the `SystemV/` area and `US/Pacific-New` (gone in 2020b) and
 * `Canada/East-Saskatchewan` (gone in 2017c). ICU keeps them for old data, so
 * the runtime accepting a name does not make it an IANA name. The list was
 * drawn on Node 20 (ICU 78, tz 2025c) by resolving every zone-like string in
 * ICU's data and comparing with tzdata 2025b's zone and link names: these are
 * all of the names with a `/` the runtime takes and the database lacks
 * (`Intl.supportedValuesOf("timeZone")` lists none of them, nor any other
 * name outside the database). The database itself is not read from the
 * system: slim container images ship without it. Compared in lower case, as
 * the runtime resolves names whatever their case.
 */
const REMOVED_IANA_NAMES: ReadonlySet<string> = new Set(["us/pacific-new", "canada/east-saskatchewan"]);

/**
 * A zone name of the IANA database as written there: `Europe/Paris`, `UTC`,
 * `CET`, `Etc/GMT+5`, links such as `US/Eastern`. The runtime reads names
 * without regard to case and also takes offsets (`+02:00`), legacy
 * abbreviations (`PST`) and names the database removed (`SystemV/EST5`),
 * none of which is a zone name, so all are refused here.
 */
export function isIanaTimeZone(name: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name)) return false;
  if (!name.includes("/") && !AREALESS_IANA_ZONES.has(name)) return false;
  const lower = name.toLowerCase();
  if (lower.startsWith("systemv/") || REMOVED_IANA_NAMES.has(lower)) return false;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return false;
  }
  return resolved === name || resolved.toLowerCase() !== name.toLowerCase();
}

/**
 * Spec 8 limits text in characters, which zod's `.max` would count as UTF-16
 * code units (an emoji is two). A character is one or two code units, so
 * text over twice the limit is refused before it is counted.
 */
function characters(min: number, max: number) {
  const rule = min > 0 ? `must be ${min} to ${max} characters` : `must be at most ${max} characters`;
  return z.string().refine((text) => {
    if (text.length > 2 * max) return false;
    const length = Array.from(text).length;
    return length >= min && length <= max;
  }, rule);
}

/**
 * Spec 4.3 asks for "email format" and names no grammar. zod's default pattern
 * refuses valid addresses (`sales=eu@example.com`, `team#7@example.com`) and
 * its RFC 5322 one refuses punycode top-level domains (`info@example.xn--p1ai`,
 * .рф), so addresses are read with its WHATWG pattern, as a browser's email
 * input reads them: any atext in the local part, hostname labels in the
 * domain. It lets dots stand anywhere in the local part, which RFC 5322 does
 * not; none of zod's patterns takes the addresses above and refuses those.
 */
const emailAddress = characters(0, 254).pipe(z.email({ pattern: z.regexes.html5Email, message: "must be an email address" }));

/**
 * Text made only of Unicode White_Space characters. JavaScript's `\s` is
 * another set: it leaves out U+0085 NEXT LINE, which is White_Space, and takes
 * in U+FEFF, a format character that is not.
 */
const ONLY_WHITESPACE = /^\p{White_Space}*$/u;

/** Campaign and lead uids (spec 8: at most 255 characters). */
const uid = z.string().min(1, "is required").pipe(characters(1, 255));

export function updateDataSchema(encoding: BodyEncoding = "json") {
  const f = fieldsFor(encoding);
  return z
    .object({
      name: characters(1, 300).refine((text) => !ONLY_WHITESPACE.test(text), "must contain a non-whitespace character"),
      reply_to_address: f.nullable(emailAddress).default(null),
      daily_email_limit: f.integer(10, 100),
      skip_days: f.array(dayName, 6).optional(),
      single_subject: f.boolean(),
      scheduling_strategy: updatableSchedulingStrategy,
      from_time: timeOfDay,
      to_time: timeOfDay,
      time_zone: characters(0, 100).refine(isIanaTimeZone, "must be an IANA time zone name such as UTC or Europe/Paris"),
      add_unsub_link: f.boolean(),
      unsub_link_type: unsubLinkType,
      custom_unsub_text: z.string(),
      click_tracking_enabled: f.boolean(),
      open_tracking_enabled: f.boolean(),
      skip_dangerous_emails: f.boolean(),
      skip_disposable_emails: f.boolean(),
      skip_catchall_emails: f.boolean(),
      skip_full_inbox_emails: f.boolean(),
      skip_invalid_emails: f.boolean(),
      forward_negative_emails: f.boolean(),
      forward_netural_emails: f.boolean(),
      sending_domains: f.array(f.integer(INT32_MIN, INT32_MAX)),
    })
    .refine((data) => sendingWindowSeconds(data.from_time, data.to_time) >= MIN_SENDING_WINDOW_SECONDS, {
      path: ["to_time"],
      message: "from_time and to_time must be at least 3 hours apart",
      when: readable("from_time", "to_time"),
    })
    .refine((data) => data.add_unsub_link || data.unsub_link_type !== "custom", {
      path: ["unsub_link_type"],
      message: "custom is valid only when add_unsub_link is true",
      when: readable("add_unsub_link", "unsub_link_type"),
    })
    .refine((data) => data.unsub_link_type === "custom" || data.custom_unsub_text === "", {
      path: ["custom_unsub_text"],
      message: "must be an empty string unless unsub_link_type is custom",
      when: readable("unsub_link_type", "custom_unsub_text"),
    });
}

/**
 * A rule between fields is checked whenever the fields it reads could be read, whatever else is wrong with the
 * body (contract A.5: every violated rule is named); zod would skip it once any field had a type error.
 */
function readable(...fields: string[]): (payload: z.core.ParsePayload) => boolean {
  return (payload) => !payload.issues.some((issue) => issue.path === undefined || issue.path.length === 0 || fields.includes(String(issue.path[0])));
}
export type UpdateData = z.infer<ReturnType<typeof updateDataSchema>>;

export function updateCampaignBodySchema(encoding: BodyEncoding = "json") {
  return z.object({
    campaign_uid: uid,
    update_data: fieldsFor(encoding).object(updateDataSchema(encoding)),
  });
}
export type UpdateCampaignBody = z.infer<ReturnType<typeof updateCampaignBodySchema>>;

/**
 * The fields of an update campaign body that are checked against the campaign
 * (contract A.5: the strategy against its number of sequences, the sending
 * domains against the account's), read from a body that breaks some other
 * rule: each field that is valid on its own, undefined otherwise, so that one
 * 400 can name every violated rule. Never fails.
 */
export function updateCrossCheckedFieldsSchema(encoding: BodyEncoding = "json") {
  const f = fieldsFor(encoding);
  const updateData = z.object({
    scheduling_strategy: updatableSchedulingStrategy.optional().catch(undefined),
    sending_domains: f.array(f.integer(INT32_MIN, INT32_MAX)).optional().catch(undefined),
  });
  return z
    .object({
      campaign_uid: uid.optional().catch(undefined),
      update_data: f.object(updateData).optional().catch(undefined),
    })
    .catch({});
}

export function sequenceDataSchema(encoding: BodyEncoding = "json") {
  const f = fieldsFor(encoding);
  return z.object({
    order: f.integer(INT32_MIN, INT32_MAX),
    subject: z.string(),
    body: z.string(),
    next_message_days: f.integer(0, 32_767).default(0),
  });
}
export type SequenceData = z.infer<ReturnType<typeof sequenceDataSchema>>;

export function createSequenceBodySchema(encoding: BodyEncoding = "json") {
  return z.object({
    campaign_uid: uid,
    sequence_data: fieldsFor(encoding).object(sequenceDataSchema(encoding)),
  });
}
export type CreateSequenceBody = z.infer<ReturnType<typeof createSequenceBodySchema>>;

export const lifecycleBody = z.object({ campaign_uid: uid });
export type LifecycleBody = z.infer<typeof lifecycleBody>;

/** Query strings arrive as text; integers must be written as integers. */
const queryIntegerText = z.string().regex(/^-?\d+$/, "must be an integer");

const queryInteger = (min: number, max: number) =>
  queryIntegerText.transform(Number).pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));

/**
 * Any non-negative integer is an offset, one past the end included (contract A.3:
 * an empty page, not an error). Past 2^53 numbers are no longer exact, but such an
 * offset is past the end of every listing anyway, so it reads as 2^53 - 1.
 */
const queryOffset = queryIntegerText.transform((text) => Math.min(Number(text), Number.MAX_SAFE_INTEGER)).pipe(z.number().min(0, "must be at least 0"));

/**
 * A numeric identifier as read. Past 2^53 a number is not exact, so such an id is a
 * bigint: it names no record (the emulator's ids are int32), and the 404 names it as sent.
 */
export type NumericId = number | bigint;

/**
 * An identifier that looks a record up is well formed whatever its size: one that
 * names nothing is the lookup's 404 (contract A.2), not a range error.
 */
const queryIdentifier = queryIntegerText.transform((text): NumericId => {
  const id = Number(text);
  return Number.isSafeInteger(id) ? id : BigInt(text);
});
const bodyIdentifier = z.number().refine(Number.isInteger, "must be an integer");

export const DEFAULT_PAGE_LIMIT = 10;
export const MAX_PAGE_LIMIT = 100;

export const pageQuery = z.object({
  [PARAMS.limit]: queryInteger(1, MAX_PAGE_LIMIT).default(DEFAULT_PAGE_LIMIT),
  [PARAMS.offset]: queryOffset.default(0),
});
export type PageQuery = z.infer<typeof pageQuery>;

export const workspaceFilterQuery = pageQuery.extend({ [PARAMS.workspaceId]: queryIdentifier.optional() });

export const campaignUidQuery = z.object({ [PARAMS.campaignUid]: uid });
export const campaignPageQuery = pageQuery.extend(campaignUidQuery.shape);
export const leadUidQuery = z.object({ [PARAMS.leadUid]: uid });
export const sequenceIdQuery = z.object({ [PARAMS.sequenceId]: queryIdentifier });
/** DELETE /email-sequence/ may carry its id in a JSON body instead of the query (contract A.1). */
export const sequenceIdBody = z.object({ [PARAMS.sequenceId]: bodyIdentifier });
