import { isUtf8 } from "node:buffer";
import type { IncomingHttpHeaders } from "node:http";
import { TextDecoder } from "node:util";
import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from "node:zlib";

/**
 * An answer's bytes as text. JSON travels as UTF-8 (RFC 8259), but real
 * upstreams and the proxies before them compress answers nobody asked to be
 * compressed, declare another charset, or send text in another encoding
 * without saying so. None of that may cost a record or change a value without
 * a word:
 * - a `Content-Encoding` (gzip, deflate, br, in the order they were applied)
 *   is undone; one Node cannot undo is an error naming it;
 * - UTF-16 (a byte order mark, or JSON's ASCII each beside a NUL) is read as
 *   UTF-16, unless another charset is declared;
 * - bytes that are UTF-8 are read as UTF-8, a byte order mark dropped;
 * - bytes that are not, in a declared charset the runtime knows (ISO-8859-1,
 *   windows-1252, …), are decoded by it;
 * - bytes that are not UTF-8 where no such charset is declared each become a lone low
 *   surrogate U+DC80 + byte (Python's "surrogateescape"): the careful read
 *   (storable-text.ts) puts U+FFFD in its place and names the field, its raw
 *   value showing the byte (`\udce9` for 0xE9), and a key that held one places
 *   no record. Decoded lossily, two keys that differ in such a byte would
 *   become one row without a word.
 */

export interface BodyText {
  text: string;
  /** Bytes that were not UTF-8 were escaped: the answer's records need the careful read. */
  escaped: boolean;
}

/** An answer that cannot be decoded however often it is asked for: a coding Node cannot undo, or a bomb. */
export class UndecodableBodyError extends Error {}

/** Far above any page (the sync holds about 2 MiB of answers at once), far below what would exhaust the process. */
const MAX_DECODED_BYTES = 64 * 1024 * 1024;

/** `maxBytes`: the most a compressed answer may decode to (a page is a few MiB at most; a bomb is refused). */
export function bodyText(headers: IncomingHttpHeaders, bytes: Buffer, maxBytes = MAX_DECODED_BYTES): BodyText {
  let inflated: Buffer;
  try {
    inflated = decompressed(headerValue(headers["content-encoding"]), bytes, { maxOutputLength: maxBytes });
  } catch (error) {
    if (error instanceof RangeError) throw new UndecodableBodyError(`an answer that decompresses to more than ${maxBytes} bytes`);
    throw error;
  }
  const plain = withoutUtf8Bom(inflated);
  const charset = charsetOf(headerValue(headers["content-type"]));
  // UTF-16 text of JSON is valid UTF-8 too (each ASCII character beside a NUL): it is told by its NULs first.
  const utf16 = utf16Of(plain, charset);
  if (utf16 !== undefined) return { text: new TextDecoder(utf16).decode(plain), escaped: false };
  // Bytes that are UTF-8 are read as UTF-8 whatever the label says: JSON is UTF-8 (RFC 8259 gives application/json
  // no charset parameter), and servlet stacks label UTF-8 answers ISO-8859-1 by default.
  if (isUtf8(plain)) return { text: plain.toString("utf8"), escaped: false };
  const decoder = charset === undefined ? undefined : decoderFor(charset);
  if (decoder !== undefined) return { text: decoder.decode(plain), escaped: false };
  return { text: surrogateEscaped(plain), escaped: true };
}

/** A UTF-8 byte order mark, which some servers write before JSON and JSON.parse refuses. */
function withoutUtf8Bom(bytes: Buffer): Buffer {
  return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
}

function headerValue(header: string | string[] | undefined): string {
  return (Array.isArray(header) ? header.join(",") : (header ?? "")).trim();
}

function decompressed(contentEncoding: string, bytes: Buffer, limit: { maxOutputLength: number }): Buffer {
  // Listed in the order they were applied: undone from the last.
  const codings = contentEncoding.split(",").map((coding) => coding.trim().toLowerCase()).filter((coding) => coding !== "" && coding !== "identity");
  let body = bytes;
  for (const coding of codings.reverse()) {
    if (body.length === 0) break;
    // A body labelled gzip that does not start as gzip does (a proxy that mislabels a plain answer) is read as it is.
    if (coding === "gzip" || coding === "x-gzip") body = isGzip(body) ? gunzipSync(body, limit) : body;
    else if (coding === "br") body = brotliDecompressSync(body, limit);
    else if (coding === "deflate") body = inflated(body, limit);
    else throw new UndecodableBodyError(`an answer in a Content-Encoding coldsync cannot decode: ${coding}`);
  }
  return body;
}

/** The gzip magic bytes (RFC 1952): a cut gzip answer still has them, a mislabelled plain one does not. */
function isGzip(body: Buffer): boolean {
  return body[0] === 0x1f && body[1] === 0x8b;
}

/** `deflate` is meant to be zlib-wrapped (RFC 9110), and often sent raw. */
function inflated(body: Buffer, limit: { maxOutputLength: number }): Buffer {
  try {
    return inflateSync(body, limit);
  } catch (error) {
    // Past the limit: raw or wrapped, it is too large.
    if (error instanceof RangeError) throw error;
    return inflateRawSync(body, limit);
  }
}

function charsetOf(contentType: string): string | undefined {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType);
  return match?.[1]?.toLowerCase();
}

/**
 * The UTF-16 the bytes are in, when they are: a byte order mark, or else JSON's first two characters, which are
 * ASCII, each beside a NUL (RFC 4627's detection), and a UTF-16 label (or none) that does not say otherwise.
 * .NET's Encoding.Unicode writes UTF-16LE without a mark.
 */
function utf16Of(bytes: Buffer, charset: string | undefined): "utf-16le" | "utf-16be" | undefined {
  if (charset !== undefined && !/^(utf-16(le|be)?|ucs-2|unicode)$/.test(charset)) return undefined;
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return "utf-16le";
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return "utf-16be";
  if (bytes.length < 4) return undefined;
  if (bytes[0] !== 0 && bytes[1] === 0 && bytes[2] !== 0 && bytes[3] === 0) return "utf-16le";
  if (bytes[0] === 0 && bytes[1] !== 0 && bytes[2] === 0 && bytes[3] !== 0) return "utf-16be";
  return undefined;
}

const UTF8_LABELS = new Set(["utf-8", "utf8", "unicode-1-1-utf-8"]);

/** A decoder for a declared charset other than UTF-8, when the runtime knows it. */
function decoderFor(charset: string): TextDecoder | undefined {
  if (UTF8_LABELS.has(charset)) return undefined;
  try {
    return new TextDecoder(charset);
  } catch {
    return undefined;
  }
}

/** UTF-8 decoding in which each byte of an invalid sequence becomes U+DC80 + byte. Only answers that are not UTF-8 come here. */
function surrogateEscaped(bytes: Buffer): string {
  const strict = new TextDecoder("utf-8", { fatal: true });
  let text = "";
  let start = 0;
  let index = 0;
  while (index < bytes.length) {
    const length = sequenceLength(bytes, index);
    if (length > 0) {
      index += length;
      continue;
    }
    text += strict.decode(bytes.subarray(start, index)) + String.fromCharCode(0xdc00 + (bytes[index] as number));
    index += 1;
    start = index;
  }
  return text + strict.decode(bytes.subarray(start));
}

/** The length of the well-formed UTF-8 sequence at `at` (RFC 3629's table), or 0. */
function sequenceLength(bytes: Buffer, at: number): number {
  const first = bytes[at] as number;
  if (first < 0x80) return 1;
  const continuation = (offset: number, low = 0x80, high = 0xbf) => {
    const byte = bytes[at + offset];
    return byte !== undefined && byte >= low && byte <= high;
  };
  if (first >= 0xc2 && first <= 0xdf) return continuation(1) ? 2 : 0;
  if (first >= 0xe0 && first <= 0xef) {
    const [low, high] = first === 0xe0 ? [0xa0, 0xbf] : first === 0xed ? [0x80, 0x9f] : [0x80, 0xbf];
    return continuation(1, low, high) && continuation(2) ? 3 : 0;
  }
  if (first >= 0xf0 && first <= 0xf4) {
    const [low, high] = first === 0xf0 ? [0x90, 0xbf] : first === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
    return continuation(1, low, high) && continuation(2) && continuation(3) ? 4 : 0;
  }
  return 0;
}
