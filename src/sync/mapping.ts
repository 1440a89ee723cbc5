import type { z } from "zod";
import { parseInstant } from "../upstream/instant.ts";
import { isUnread, type FieldIssue } from "../upstream/tolerant.ts";

/**
 * Small helpers shared by the row mappings of the streams.
 */

/** Upstream fields the spec does not know, kept in `_extra` (null when there are none). */
export function unknownFields(record: object | null, schema: z.ZodObject): Record<string, unknown> | null {
  if (record === null) return null;
  const shape = schema.shape;
  let extra: [string, unknown][] | undefined;
  for (const field in record) {
    // Own fields of the shape only: `in` would also find what every object inherits, and drop a field named `constructor`.
    if (!Object.hasOwn(shape, field)) (extra ??= []).push([field, (record as Record<string, unknown>)[field]]);
  }
  // fromEntries defines each field, so one named `__proto__` stays a field: an assignment would set the prototype.
  return extra === undefined ? null : Object.fromEntries(extra);
}

/**
 * A date-time as the warehouse stores it: canonical instant text, which keeps
 * the upstream's microseconds (a Date would round them away). Reading passes
 * only date-times parseInstant reads (resources.ts names the others and leaves
 * them null), so one it cannot read here is a bug: it fails loudly rather than
 * erase a stored value, or send NULL into a key.
 */
export function instant<T extends string | null>(value: T): T {
  if (value === null) return value;
  const text = parseInstant(value);
  if (text === null) throw new Error(`date-time ${JSON.stringify(value)} passed reading but names no instant the warehouse holds`);
  return text as T;
}

/** Composite natural keys are joined with "|", as in the emulator's ground truth. */
export function compositeKey(...parts: (string | number | null)[]): string {
  return parts.join("|");
}

/**
 * Leaves out (as undefined) each column of `row` whose field deviated and
 * could not be read, so that it overwrites nothing: a new row gets NULL there,
 * an existing row keeps what it holds, and the row's `_field_issues` says why.
 * `prefix` is where the row's fields sit in the record (`schedules.2`), and
 * `pathOf` names a column's field when the two differ (`settings.name`).
 * A clean record costs one length check.
 */
export function withoutUnreadable<T extends object>(
  row: T,
  issues: readonly FieldIssue[],
  prefix = "",
  pathOf: (column: string) => string = (column) => column,
): T {
  if (issues.length === 0) return row;
  const start = prefix === "" ? "" : `${prefix}.`;
  const fields = row as Record<string, unknown>;
  for (const column of Object.keys(fields)) {
    if (fields[column] !== null) continue;
    const path = `${start}${pathOf(column)}`;
    // The field itself, or an object above it (a `settings` that arrived as null), could not be read. An object
    // read another way (a one-item list for it) holds its real nulls.
    const unreadHere = (issue: FieldIssue) => path === issue.path || (isUnread(issue) && path.startsWith(`${issue.path}.`) && !isItemBelow(path, issue.path));
    if (issues.some(unreadHere)) fields[column] = undefined;
  }
  return row;
}

/**
 * Whether `path` lies inside an item of the list at `list` (`schedules.0.sent_on` below `schedules`): an issue
 * with a list whose items were read (a single record sent for it, more items than documented) says nothing about
 * an item's fields, and a list that could not be read has no items to make rows of.
 */
function isItemBelow(path: string, list: string): boolean {
  const code = path.charCodeAt(list.length + 1);
  return code >= 48 && code <= 57;
}
