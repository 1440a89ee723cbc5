import type { FastifyInstance } from "fastify";
import { badRequest } from "./errors.ts";
import { formPairs, undecodable } from "./form-pairs.ts";

/**
 * Query strings read as fastify's default parser (fast-querystring) reads
 * them: `+` is a space, a name given twice holds an array, a name without `=`
 * holds "". That parser keeps a percent-escape it cannot decode (`%`, `%ZZ`,
 * `%E0%A4%A`, `%FF`) as the text sent, so `campaign_uid=%E0%A4%A` looked up a
 * campaign of that name and answered 404. Here such a name or value is noted
 * instead, and the request answers 400 naming the parameter (contract A.2: a
 * bad query parameter), after the key and rate checks, as a body that cannot
 * be read does, and as the router answers a malformed escape in the path.
 */

const UNREADABLE = Symbol("unreadable query parameters");

type Query = Record<string, string | string[]> & { [UNREADABLE]?: string[] };

export function parseQueryString(text: string): Query {
  const query = Object.create(null) as Query;
  const unreadable: string[] = [];
  for (const { rawName, rawValue, name: decodedName, value } of formPairs(text)) {
    const name = decodedName ?? rawName.replaceAll("+", " ");
    if (decodedName === undefined) unreadable.push(`${rawName}: the parameter's name ${undecodable(rawName)}`);
    else if (value === undefined) unreadable.push(`${name}: ${undecodable(rawValue)}`);
    const kept = value ?? rawValue;
    const held = query[name];
    query[name] = held === undefined ? kept : Array.isArray(held) ? [...held, kept] : [held, kept];
  }
  if (unreadable.length > 0) Object.defineProperty(query, UNREADABLE, { value: unreadable, enumerable: false });
  return query;
}

/**
 * Answers 400 to a request whose query string could not be decoded, before its
 * handler reads it; an unknown path or method is still a 404 or 405 (contract A.2 order).
 */
export function registerQueryCheck(app: FastifyInstance): void {
  app.addHook("preValidation", async (request) => {
    if (request.is404) return;
    const unreadable = (request.query as Query | undefined)?.[UNREADABLE];
    if (unreadable !== undefined) throw badRequest(unreadable.join("; "));
  });
}
