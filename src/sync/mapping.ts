import type { z } from "zod";

/**
 * Small helpers shared by the row mappings of the streams.
 */

/** Upstream fields the spec does not know, kept in `_extra` (null when there are none). */
export function unknownFields(record: object, schema: z.ZodType): Record<string, unknown> | null {
  const shape = (schema as unknown as { shape?: Record<string, unknown> }).shape ?? {};
  const extra = Object.entries(record).filter(([field]) => !(field in shape));
  return extra.length === 0 ? null : Object.fromEntries(extra);
}

/** Date-times travel as ISO strings and land as timestamptz; keys use the same normal form. */
export function toDate(value: string): Date;
export function toDate(value: string | null): Date | null;
export function toDate(value: string | null): Date | null {
  return value === null ? null : new Date(value);
}

export function isoKey(value: string): string {
  return new Date(value).toISOString();
}

/** Composite natural keys are joined with "|", as in the emulator's ground truth. */
export function compositeKey(...parts: (string | number)[]): string {
  return parts.join("|");
}
