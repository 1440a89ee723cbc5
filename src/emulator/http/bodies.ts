import formbody from "@fastify/formbody";
import multipart from "@fastify/multipart";
import type { FastifyInstance, FastifyRequest } from "fastify";
import qs from "qs";
import type { BodyEncoding } from "../../upstream/requests.ts";
import { badRequest } from "./errors.ts";

/**
 * Request bodies in the three encodings the API accepts: JSON,
 * form-urlencoded and multipart/form-data. Parsing never fails on its own:
 * an unreadable body is kept as an UnreadableBody and turned into a 400 only
 * by the handler that needs the body, so that routing (404, 405),
 * authentication (401) and rate limiting (429) are decided first.
 */

export const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** Bracketed keys nest (update_data[name]=x), dotted keys too, repeated keys make arrays. */
const QS_OPTIONS: qs.IParseOptions = { allowDots: true, arrayLimit: 1_000, parameterLimit: 10_000, depth: 5 };

export class UnreadableBody {
  constructor(readonly reason: string) {}
}

function parseJsonText(text: string): unknown {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    return new UnreadableBody(`malformed JSON (${error instanceof Error ? error.message : String(error)})`);
  }
}

export async function registerBodyParsers(app: FastifyInstance): Promise<void> {
  app.removeAllContentTypeParsers();
  for (const type of ["application/json", /^application\/[\w.+-]+\+json$/]) {
    app.addContentTypeParser(type, { parseAs: "string" }, (_request, text, done) => {
      done(null, parseJsonText(String(text)));
    });
  }
  await app.register(formbody, { bodyLimit: MAX_BODY_BYTES, parser: (text) => qs.parse(text, QS_OPTIONS) });
  await app.register(multipart, { limits: { fieldSize: MAX_BODY_BYTES, fileSize: MAX_BODY_BYTES, fields: 10_000 } });
  app.addContentTypeParser("*", { parseAs: "buffer" }, (request, _body, done) => {
    done(null, new UnreadableBody(`unsupported content type ${request.headers["content-type"] ?? "(none)"}; send JSON, form-urlencoded or multipart/form-data`));
  });
}

async function readMultipart(request: FastifyRequest): Promise<unknown> {
  const pairs: [string, string][] = [];
  try {
    for await (const part of request.parts()) {
      if (part.type === "file") pairs.push([part.fieldname, (await part.toBuffer()).toString("utf8")]);
      else pairs.push([part.fieldname, String(part.value)]);
    }
  } catch (error) {
    throw badRequest(`body: malformed multipart/form-data (${error instanceof Error ? error.message : String(error)})`);
  }
  // The same normalisation as form-urlencoded bodies, so both encodings read alike.
  return qs.parse(new URLSearchParams(pairs).toString(), QS_OPTIONS);
}

interface ReadBody {
  encoding: BodyEncoding;
  value: unknown;
}

/**
 * The media type of the body without its parameters, lower-cased: media types
 * are case-insensitive (RFC 9110 §8.3.1) and fastify picks the parser that way,
 * so a body is read as the encoding its parser produced.
 */
function mediaTypeOf(request: FastifyRequest): string {
  return (request.headers["content-type"]?.split(";", 1)[0] ?? "").trim().toLowerCase();
}

const FORM_MEDIA_TYPES: ReadonlySet<string> = new Set(["application/x-www-form-urlencoded", "multipart/form-data"]);

export async function readBody(request: FastifyRequest): Promise<ReadBody> {
  if (request.isMultipart()) return { encoding: "form", value: await readMultipart(request) };
  const body = request.body;
  if (body instanceof UnreadableBody) throw badRequest(`body: ${body.reason}`);
  return { encoding: FORM_MEDIA_TYPES.has(mediaTypeOf(request)) ? "form" : "json", value: body };
}

/**
 * The body of an endpoint that takes JSON only: every one but update campaign
 * and create email sequence (spec 2.1; lifecycle POSTs, spec 4 and contract
 * A.4; a DELETE's `{"id": N}`, contract A.1). A form body is a 400, before
 * anything is looked up.
 */
export async function readJsonBody(request: FastifyRequest): Promise<unknown> {
  const mediaType = mediaTypeOf(request);
  if (FORM_MEDIA_TYPES.has(mediaType)) {
    throw badRequest(`body: must be JSON (application/json), not ${mediaType}; only update campaign and create email sequence take form bodies`);
  }
  return (await readBody(request)).value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Forms may send the nested object (update_data, sequence_data) as its own
 * fields at the top level; gathers them under `field` when it is absent.
 */
export function nestFlatFields(value: unknown, field: string, keep: readonly string[]): unknown {
  if (!isRecord(value) || value[field] !== undefined) return value;
  const top: Record<string, unknown> = {};
  const nested: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) (keep.includes(key) ? top : nested)[key] = inner;
  return Object.keys(nested).length === 0 ? value : { ...top, [field]: nested };
}
