import type { z } from "zod";
import { describeIssues } from "../../upstream/parsing.ts";
import { badRequest } from "./errors.ts";

/**
 * zod validation that answers 400 with one readable line per violated rule,
 * each prefixed by the field's path ("update_data.daily_email_limit: must be
 * at most 100"). Messages written into the schemas win over these defaults.
 */

type Issue = z.core.$ZodRawIssue;

function bound(issue: Issue & { origin?: string }, limit: unknown, word: "least" | "most"): string {
  switch (issue.origin) {
    case "string":
      return `must be at ${word} ${String(limit)} characters long`;
    case "array":
    case "set":
      return `must have at ${word} ${String(limit)} items`;
    default:
      return `must be at ${word} ${String(limit)}`;
  }
}

const ARTICLES: Record<string, string> = {
  int: "an integer",
  number: "a number",
  string: "a string",
  boolean: "a boolean (true or false)",
  object: "an object",
  array: "an array",
};

/** A zod error map with short messages meant to follow a field name. */
export function readable(issue: Issue): string | undefined {
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return "is required";
      if (issue.expected === "string" && Array.isArray(issue.input)) return "must be given once";
      return `must be ${ARTICLES[issue.expected] ?? issue.expected}`;
    case "too_big":
      return bound(issue, issue.maximum, "most");
    case "too_small":
      return bound(issue, issue.minimum, "least");
    case "invalid_value":
      return `must be one of: ${issue.values.map(String).join(", ")}`;
    case "invalid_format":
      return issue.format === "email" ? "must be an email address" : `must match the ${issue.format} format`;
    case "unrecognized_keys":
      return `unknown field${issue.keys.length > 1 ? "s" : ""}: ${issue.keys.join(", ")}`;
    default:
      return undefined;
  }
}

/** `value` parsed, or every problem as one `path: reason` line per violated rule, joined by "; ". */
export function parseOrProblems<S extends z.ZodType>(schema: S, value: unknown, root: string): { data: z.infer<S> } | { problems: string } {
  const result = schema.safeParse(value, { error: readable });
  return result.success ? { data: result.data } : { problems: describeIssues(result.error, root) };
}

/** Parses `value` or throws a 400 naming every problem; `root` names the value itself (e.g. "body"). */
export function parseOr400<S extends z.ZodType>(schema: S, value: unknown, root: string): z.infer<S> {
  const parsed = parseOrProblems(schema, value, root);
  if ("data" in parsed) return parsed.data;
  throw badRequest(parsed.problems);
}
