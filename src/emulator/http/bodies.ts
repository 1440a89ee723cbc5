import multipart from "@fastify/multipart";
import type { FastifyInstance, FastifyRequest } from "fastify";
import qs from "qs";
import type { BodyEncoding } from "../../upstream/requests.ts";
import { ApiError, badRequest } from "./errors.ts";
import { decodeFormComponent, formPairs, quoted, undecodable } from "./form-pairs.ts";

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

/** Throws on bytes that are not UTF-8 instead of putting U+FFFD in their place. */
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function strictDecoder(text: string): string {
  const decoded = decodeFormComponent(text);
  if (decoded === undefined) throw new URIError(`cannot decode ${text}`);
  return decoded;
}

/**
 * A form-urlencoded body read with qs, or an UnreadableBody naming the field
 * whose name or value cannot be decoded (contract A.2: a malformed form body
 * is a 400 naming what is wrong).
 */
export function parseFormText(text: string): unknown {
  for (const { rawName, rawValue, name, value } of formPairs(text)) {
    if (name === undefined) return new UnreadableBody(`the field name ${undecodable(rawName)}`);
    if (value === undefined) return new UnreadableBody(`${name}: ${undecodable(rawValue)}`);
  }
  try {
    return qs.parse(text, { ...QS_OPTIONS, decoder: strictDecoder });
  } catch (error) {
    return new UnreadableBody(`malformed form body (${error instanceof Error ? error.message : String(error)})`);
  }
}

/** The body's bytes as text, or undefined when they are not UTF-8. */
function utf8Text(bytes: Buffer): string | undefined {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** JSON must be UTF-8 (RFC 8259 §8.1): other bytes are a malformed body, not text with U+FFFD in it. */
function parseJsonBytes(bytes: Buffer): unknown {
  const text = utf8Text(bytes);
  if (text === undefined) return new UnreadableBody("malformed JSON (the body is not UTF-8, RFC 8259 §8.1)");
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
    app.addContentTypeParser(type, { parseAs: "buffer" }, (_request, bytes, done) => {
      done(null, parseJsonBytes(bytes as Buffer));
    });
  }
  // A form body is ASCII once encoded: raw bytes that are not UTF-8 are as malformed as a broken escape.
  app.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "buffer", bodyLimit: MAX_BODY_BYTES }, (_request, bytes, done) => {
    const text = utf8Text(bytes as Buffer);
    done(null, text === undefined ? new UnreadableBody("malformed form body (its bytes are not UTF-8)") : parseFormText(text));
  });
  // Every part is read as a file, so its bytes arrive as sent: busboy decodes a text field itself, putting
  // U+FFFD in place of bytes that are not UTF-8 (and ignores a declared charset it does not know).
  await app.register(multipart, { isPartAFile: () => true, limits: { fileSize: MAX_BODY_BYTES, files: 10_000, parts: 10_000 } });
  app.addContentTypeParser("*", { parseAs: "buffer" }, (request, _body, done) => {
    done(null, new UnreadableBody(`unsupported content type ${request.headers["content-type"] ?? "(none)"}; send JSON, form-urlencoded or multipart/form-data`));
  });
}

async function readMultipart(request: FastifyRequest): Promise<unknown> {
  const pairs: [string, string][] = [];
  try {
    for await (const part of request.parts()) {
      // busboy reads a part's name as UTF-8 with U+FFFD in place of other bytes; no field the API reads holds one.
      if (part.fieldname.includes("\uFFFD")) throw badRequest(`body: the field name ${quoted(part.fieldname)} holds bytes that are not UTF-8`);
      // Read as UTF-8 whatever charset the part declares (busboy does not tell it): bytes that are not UTF-8 are refused.
      const text = part.type === "file" ? utf8Text(await part.toBuffer()) : String(part.value);
      if (text === undefined) throw badRequest(`body: ${part.fieldname}: the part's bytes are not UTF-8`);
      pairs.push([part.fieldname, text]);
    }
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw badRequest(`body: malformed multipart/form-data (${error instanceof Error ? error.message : String(error)})`);
  }
  // The same normalisation as form-urlencoded bodies, so both encodings read alike. A `%` in a
  // multipart value is text: URLSearchParams escapes it, so the strict decoding cannot fail here.
  const value = parseFormText(new URLSearchParams(pairs).toString());
  if (value instanceof UnreadableBody) throw badRequest(`body: ${value.reason}`);
  return value;
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
