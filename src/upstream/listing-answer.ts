import { clip } from "../clip.ts";
import { pageData, pageEnvelope } from "./resources.ts";
import { keyedList } from "./tolerant.ts";

/** How a listing's answer reads, whatever its shape: the records, the total it announced, and how it deviated. */
export interface ListingAnswer {
  data: unknown[];
  total: number | null;
  /** How the answer's records deviated from the documented array, when they did (a list keyed by index or id). */
  shape?: string;
}

/**
 * A listing's records and total, from the {data, total} envelope or a bare array (the total null when none is
 * usable), or what is wrong with the answer: a protocol error, worth asking again.
 */
export function listingOf(body: unknown): ListingAnswer | string {
  // An empty list sent as null, as Go encodes an empty slice: its meaning is certain. (Read as an empty answer
  // is, it deletes nothing on its own: a listing's walk then proves nothing, a whole listing needs two reads.)
  // Its total is dropped too: `{"data": null, "total": 0}` would otherwise prove a walk whole and delete every row.
  // Not so beside an error (GraphQL's `errors`, this API's `message`): that is an outage answered as 200.
  if (body === null || (typeof body === "object" && (body as { data?: unknown }).data === null)) {
    const error = errorBeside(body);
    if (error !== undefined) return `no records but an error beside "data": null: ${clip(error, 200)}`;
    return { data: [], total: null };
  }
  if (Array.isArray(body)) return { data: body, total: null };
  const envelope = pageEnvelope.safeParse(body);
  if (envelope.success) return envelope.data;
  const records = pageData.safeParse(body);
  if (records.success) return { data: records.data.data, total: null };
  return keyedListing(body) ?? "expected a JSON array or a {data: array, total: integer} envelope";
}

/**
 * The error an answer carries, as text: an `errors`, `message` or `error` that says something. Not one that says
 * there is none (`"error": false`, `"errors": []`, `{}`, `""`, null), as some APIs put beside every answer.
 */
function errorBeside(body: object | null): string | undefined {
  const { errors, message, error } = (body ?? {}) as { errors?: unknown; message?: unknown; error?: unknown };
  const given = [errors, message, error].find(saysSomething);
  return given === undefined ? undefined : typeof given === "string" ? given : JSON.stringify(given);
}

function saysSomething(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === "") return false;
  return typeof value !== "object" || Object.keys(value).length > 0;
}

export function shapeOf(answer: ListingAnswer): { shape?: string } {
  return answer.shape === undefined ? {} : { shape: answer.shape };
}

/**
 * Records sent as an object keyed by index or by each record's id, as the envelope's `data` or as the whole
 * answer, and `{}` for none (PHP and some map serializers write a list so; nested lists are read the same way,
 * tolerant.ts). Only those shapes: any other object is no listing, and asking again is the better bet. The
 * envelope's total is kept beside records (the shape of `data` says nothing against it), dropped beside none, as
 * with `data: null`: an empty answer proves nothing.
 */
function keyedListing(body: unknown): ListingAnswer | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const enveloped = "data" in body;
  const list = keyedList(enveloped ? (body as { data: unknown }).data : body);
  if (list === undefined) return undefined;
  const total = enveloped && list.items.length > 0 ? pageEnvelope.shape.total.safeParse((body as { total?: unknown }).total) : undefined;
  return { data: list.items, total: total?.success === true ? total.data : null, shape: list.deviation };
}
