import type { z } from "zod";

/**
 * Tolerant parsing: every record is validated on its own, so one bad record
 * is set aside with its reason instead of failing the page it came in.
 */

export type Stream =
  | "workspaces"
  | "domains"
  | "contact_lists"
  | "campaigns"
  | "leads"
  | "replies"
  | "link_clicks"
  | "email_opens"
  | "email_sequences";

export interface RejectedRecord {
  stream: string;
  /** The schema's complaints on one line, each prefixed with its field path. */
  reason: string;
  /** The record exactly as it arrived. */
  payload: unknown;
}

export interface Parsed<T> {
  records: T[];
  rejected: RejectedRecord[];
}

/** `path: message; ...`, where `root` stands for an issue about the value itself. */
export function describeIssues(error: z.ZodError, root = "(record)"): string {
  return error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.map(String).join(".") : root}: ${issue.message}`).join("; ");
}

export function parseRecord<S extends z.ZodType>(stream: Stream, schema: S, raw: unknown): { record: z.infer<S> } | { rejected: RejectedRecord } {
  const result = schema.safeParse(raw);
  return result.success ? { record: result.data } : { rejected: { stream, reason: describeIssues(result.error), payload: raw } };
}

export function parseRecords<S extends z.ZodType>(stream: Stream, schema: S, raws: readonly unknown[]): Parsed<z.infer<S>> {
  const parsed: Parsed<z.infer<S>> = { records: [], rejected: [] };
  for (const raw of raws) {
    const outcome = parseRecord(stream, schema, raw);
    if ("record" in outcome) parsed.records.push(outcome.record);
    else parsed.rejected.push(outcome.rejected);
  }
  return parsed;
}
