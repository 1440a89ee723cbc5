import type { RecordDriftKind } from "../options.ts";
import type { Random } from "../random.ts";

/**
 * What one record-level drift kind makes of one value. Encodings change the
 * text, never the value: a numeric string parses to the same integer, another
 * date-time form denotes the same instant.
 */

/** A deviated value, or MISSING for a field left out; undefined when the kind changes nothing here (a null sent as null). */
export const MISSING = Symbol("missing");
export type Deviation = { value: unknown } | typeof MISSING | undefined;

const CLEAN_DATE_TIME = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})\.(\d{3}|\d{6})Z$/;
/** Offsets of real zones, whole and half hours, both sides of UTC. */
const OFFSETS_MINUTES = [120, -300, 330, -210, 540, 60, -480, 345];

function offsetText(minutes: number): string {
  const sign = minutes < 0 ? "-" : "+";
  const whole = Math.abs(minutes);
  return `${sign}${String(Math.floor(whole / 60)).padStart(2, "0")}:${String(whole % 60).padStart(2, "0")}`;
}

/**
 * The same instant in another ISO 8601 form: `+00:00` for `Z`, another offset with the local time
 * shifted to match, a space for `T`, no fraction when it is zero, or microsecond digits.
 */
export function otherDateTimeForm(text: string, random: Random): string {
  const match = CLEAN_DATE_TIME.exec(text);
  if (!match) return text;
  const [, date, time, fraction = ""] = match;
  const forms: (() => string)[] = [
    () => `${date}T${time}.${fraction}+00:00`,
    () => {
      const minutes = random.pick(OFFSETS_MINUTES);
      const local = new Date(Date.parse(`${date}T${time}.${fraction.slice(0, 3)}Z`) + minutes * 60_000).toISOString();
      return `${local.slice(0, 19)}.${fraction}${offsetText(minutes)}`;
    },
    () => `${date} ${time}.${fraction}Z`,
  ];
  if (/^0+$/.test(fraction)) forms.push(() => `${date}T${time}Z`);
  if (fraction.length === 3) forms.push(() => `${date}T${time}.${fraction}000Z`);
  return random.pick(forms)();
}

/** What `kind` makes of `value`; unknown-enum and extra-field are decided elsewhere (per entity, per record). */
export function deviate(kind: RecordDriftKind, value: unknown, random: Random): Deviation {
  switch (kind) {
    case "null":
      return value === null ? undefined : { value: null };
    case "missing":
      return MISSING;
    case "numeric-string":
      return typeof value === "number" ? { value: String(value) } : undefined;
    case "boolean-form":
      if (typeof value !== "boolean") return undefined;
      return { value: random.chance(0.5) ? String(value) : value ? 1 : 0 };
    case "datetime-form":
      return typeof value === "string" ? { value: otherDateTimeForm(value, random) } : undefined;
    default:
      return undefined;
  }
}

const TAGS = ["a", "beta", "vip", "imported", "q3-push", "🔥"];
const SOURCES = ["api", "ui", "import", "zapier"];

/** Fields the spec does not show, as a newer upstream adds them: plain values, arrays and nested objects. */
const EXTRA_FIELDS: Record<string, (random: Random) => unknown> = {
  x_trace_id: (random) => Array.from({ length: 16 }, () => random.int(0, 15).toString(16)).join(""),
  tags: (random) => random.sample(TAGS, random.int(1, 2)),
  meta: (random) => ({ source: random.pick(SOURCES), revision: random.int(1, 9), flags: { internal: random.chance(0.5) } }),
  priority: (random) => random.int(0, 5),
  updated_by: (random) => (random.chance(0.5) ? null : { id: random.int(1, 9_999), kind: "user" }),
  x_region: (random) => random.pick(["eu-west-1", "us-east-2", "ap-south-1"]),
};
const EXTRA_NAMES = Object.keys(EXTRA_FIELDS);

/** One to three extra fields whose names the record does not use. */
export function extraFields(record: Readonly<Record<string, unknown>>, random: Random): [string, unknown][] {
  const free = EXTRA_NAMES.filter((name) => !(name in record));
  const names = random.sample(free, random.int(1, 3));
  return names.map((name) => [name, (EXTRA_FIELDS[name] as (random: Random) => unknown)(random)]);
}
