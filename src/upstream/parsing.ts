import { createHash } from "node:crypto";
import type { z } from "zod";
import { RECORD_TYPES, type RecordOf, type RecordTypeName } from "./record-types.ts";
import { isUnstorableText, mayHoldUnstorable, storable } from "./storable-text.ts";
import { readTolerant, type FieldIssue } from "./tolerant.ts";

/**
 * Every record is read on its own and tolerantly: a record whose key fields
 * can be read is kept (its deviating fields null or coerced, each named in
 * its issues); only a record that cannot be placed, because a key field is
 * missing or unusable, is set aside with its reason and raw payload.
 */

export interface ReadRecord<T> {
  value: T;
  /** Fields that deviated from the schema; empty for a clean record. */
  issues: readonly FieldIssue[];
  /** The record exactly as it arrived (what a rejected part of it is stored as). */
  raw: unknown;
}

export interface RejectedRecord {
  /** The record type (or the stream whose record held the rejected part). */
  stream: string;
  /** The fields that made it unplaceable, each prefixed with its path. */
  reason: string;
  /** The record exactly as it arrived. */
  payload: unknown;
  /** What identifies it as far as it can be read (e.g. the id of a reply whose schedule_id is missing), else null. */
  recordKey: string | null;
  /** Whether `recordKey` tells the record apart on its own; when not (two opens of one schedule without opened_on), its payload does. */
  keyIdentifies?: boolean;
  /** The key fields that could be read, by name: what `recordKey` spells out. */
  readableKey?: Readonly<Record<string, unknown>>;
  /** For a part of a record (a schedule without an id inside a lead): the key of the record it came in. */
  parentKey?: string;
  /** Records below it in the payload that could not be placed because it could not (a lead's schedules, replies, clicks). */
  skipped?: number;
  /** Where it stood among the records of its page, counting placed ones too. */
  position?: number;
}

export interface Parsed<T> {
  records: ReadRecord<T>[];
  rejected: RejectedRecord[];
}

/** `path: message; ...`, where `root` stands for an issue about the value itself. */
export function describeIssues(error: z.ZodError, root = "(record)"): string {
  return error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.map(String).join(".") : root}: ${issue.message}`).join("; ");
}

/** A key value that places a record: present, and not an empty string. */
export function isUsableKey(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  return typeof value !== "string" || value.trim() !== "";
}

/**
 * Key text a btree index holds with room to spare: PostgreSQL refuses an index
 * entry above 2704 bytes (a tracking link can be longer), and the statement
 * holding it would fail with its whole page.
 */
export const INDEXABLE_KEY_BYTES = 2000;

/**
 * Why a key value that is present still cannot place its record, or undefined
 * when it can: text that held characters PostgreSQL cannot store (the key
 * stored would not be the upstream's), or text too long for the key's index.
 */
export function unplaceableKey(value: unknown, issues: readonly FieldIssue[], path: string): string | undefined {
  if (typeof value !== "string") return undefined;
  const unstorable = issues.length === 0 ? undefined : issues.find((issue) => issue.path === path && isUnstorableText(issue));
  if (unstorable !== undefined) return unstorable.reason;
  if (value.length * 3 <= INDEXABLE_KEY_BYTES) return undefined;
  const bytes = Buffer.byteLength(value);
  return bytes > INDEXABLE_KEY_BYTES ? `${bytes} bytes, longer than the warehouse can index in a key (${INDEXABLE_KEY_BYTES})` : undefined;
}

/**
 * Whether the JSON text of an answer asks for the careful read of its records:
 * it may hold characters PostgreSQL cannot store (storable-text.ts), or a field
 * named `__proto__`, which JSON.parse makes an own field but a schema's parse
 * leaves out (it would be lost from `_extra`). One scan of the text spares the
 * other answers a walk of every record.
 */
export function needsCarefulRead(jsonText: string): boolean {
  return mayHoldUnstorable(jsonText) || jsonText.includes('"__proto__"');
}

/**
 * `careful` is false only when the answer's text showed that the record needs
 * no careful read (needsCarefulRead): one that does is made storable, and one
 * holding a `__proto__` field is read field by field, which keeps every field
 * as it came.
 */
export function readRecord<N extends RecordTypeName>(
  type: N,
  arrived: unknown,
  careful = true,
): { record: ReadRecord<RecordOf<N>> } | { rejected: RejectedRecord } {
  const entry = RECORD_TYPES[type];
  const { schema, key } = entry;
  // What cannot be stored is replaced first, so that the value, the raw payload and every issue's raw can be written.
  const textIssues: FieldIssue[] = [];
  const raw = careful ? storable(arrived, textIssues) : arrived;
  // Field by field only for a record that holds a `__proto__` field: a careful answer is most often one whose
  // upstream escapes every non-ASCII character (an emoji as two surrogate escapes), which needs the strict try.
  const read = readTolerant(schema as z.ZodType, raw, careful && holdsProtoField(raw));
  const { value } = read;
  // A field's own issue (a wrong type) comes last, so that it is the one its row names.
  const issues = textIssues.length === 0 ? read.issues : [...textIssues, ...read.issues];
  const fields = value as Record<string, unknown> | null;
  let problems: Map<string, string> | undefined;
  if (fields !== null) {
    for (const field of key) {
      const problem = isUsableKey(fields[field]) ? unplaceableKey(fields[field], issues, field) : undefined;
      if (problem !== undefined) (problems ??= new Map()).set(field, problem);
    }
  }
  const placeable = (field: string) => fields !== null && isUsableKey(fields[field]) && !problems?.has(field);
  const unusable = key.filter((field) => !placeable(field));
  if (unusable.length === 0) return { record: { value: value as RecordOf<N>, issues, raw } };
  const readableKey = fields === null ? {} : Object.fromEntries(key.filter(placeable).map((field) => [field, fields[field]]));
  const identity: readonly string[] = "identity" in entry ? entry.identity : key;
  const keyIdentifies = identity.every((field) => field in readableKey);
  return { rejected: { stream: type, reason: keyReason(unusable, issues, fields, problems), payload: raw, recordKey: spelledKey(readableKey), keyIdentifies, readableKey } };
}

/**
 * What tells a rejected record apart from the others of its listing: its
 * readable key when that names it alone, else that key and a hash of its
 * payload, so two records that lost the same key field stay two.
 */
export function rejectedIdentity(record: RejectedRecord): string {
  if (record.keyIdentifies && record.recordKey !== null) return `key:${record.recordKey}`;
  const hash = createHash("sha256")
    .update(JSON.stringify(record.payload) ?? "undefined")
    .digest("base64url")
    .slice(0, 22);
  return record.recordKey === null ? `sha:${hash}` : `key:${record.recordKey}|sha:${hash}`;
}

/** Whether a value holds, at any depth, an own field named `__proto__` (JSON.parse makes one a field). */
function holdsProtoField(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (Array.isArray(value)) return value.some(holdsProtoField);
  return Object.hasOwn(value, "__proto__") || Object.values(value).some(holdsProtoField);
}

export function readRecords<N extends RecordTypeName>(type: N, raws: readonly unknown[], careful = true): Parsed<RecordOf<N>> {
  const parsed: Parsed<RecordOf<N>> = { records: [], rejected: [] };
  raws.forEach((raw, position) => {
    const outcome = readRecord(type, raw, careful);
    if ("record" in outcome) parsed.records.push(outcome.record);
    else parsed.rejected.push({ ...outcome.rejected, position });
  });
  return parsed;
}

function keyReason(
  unusable: readonly string[],
  issues: readonly FieldIssue[],
  fields: Record<string, unknown> | null,
  problems: ReadonlyMap<string, string> | undefined,
): string {
  if (fields === null) return issues.map((issue) => `${issue.path || "(record)"}: ${issue.reason}`).join("; ") || "(record): not an object";
  return unusable
    .map((field) => {
      // The last issue of a field is its own (a wrong type), after what was replaced in its text.
      const issue = issues.findLast((candidate) => candidate.path === field);
      return `${field}: ${problems?.get(field) ?? issue?.reason ?? "empty"} (a key field, so the record cannot be placed)`;
    })
    .join("; ");
}

/** The key fields that could be read, as `field=value` pairs, so a record rejected again is recognised as the same one. */
function spelledKey(readableKey: Readonly<Record<string, unknown>>): string | null {
  const known = Object.entries(readableKey).map(([field, value]) => `${field}=${String(value)}`);
  return known.length === 0 ? null : known.join("|");
}
