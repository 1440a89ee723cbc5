import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { bodyText, UndecodableBodyError } from "../../src/upstream/body-text.ts";

const JSON_TEXT = '{"data":[{"name":"Café Crème ✓"}],"total":1}';
const utf8 = Buffer.from(JSON_TEXT, "utf8");

describe("an answer's bytes as text", () => {
  it("reads UTF-8 as it is, with or without a declared charset", () => {
    expect(bodyText({ "content-type": "application/json" }, utf8)).toEqual({ text: JSON_TEXT, escaped: false });
    expect(bodyText({ "content-type": "application/json; charset=UTF-8" }, utf8)).toEqual({ text: JSON_TEXT, escaped: false });
    expect(bodyText({}, Buffer.alloc(0))).toEqual({ text: "", escaped: false });
  });

  it("undoes each Content-Encoding, in the reverse of the order it was applied", () => {
    const encodings: [string, Buffer][] = [
      ["gzip", gzipSync(utf8)],
      ["x-gzip", gzipSync(utf8)],
      ["br", brotliCompressSync(utf8)],
      ["deflate", deflateSync(utf8)],
      ["deflate", deflateRawSync(utf8)],
      ["GZIP, br", brotliCompressSync(gzipSync(utf8))],
      ["identity", utf8],
    ];
    for (const [coding, bytes] of encodings) expect(bodyText({ "content-encoding": coding }, bytes).text, coding).toBe(JSON_TEXT);
  });

  it("refuses an answer that decompresses past its limit (a bomb), however well it compresses", () => {
    const zeros = gzipSync(Buffer.alloc(100_000));
    const refused = new UndecodableBodyError("an answer that decompresses to more than 10000 bytes");
    expect(() => bodyText({ "content-encoding": "gzip" }, zeros, 10_000)).toThrow(refused);
    expect(() => bodyText({ "content-encoding": "deflate" }, deflateSync(Buffer.alloc(100_000)), 10_000)).toThrow(refused);
    expect(bodyText({ "content-encoding": "gzip" }, zeros, 100_000).text).toHaveLength(100_000);
  });

  it("reads a plain answer labelled gzip as it is", () => {
    expect(bodyText({ "content-encoding": "gzip" }, utf8)).toEqual({ text: JSON_TEXT, escaped: false });
  });

  it("names a Content-Encoding it cannot undo, and fails on a cut compressed answer", () => {
    expect(() => bodyText({ "content-encoding": "zstd" }, utf8)).toThrow(new UndecodableBodyError("an answer in a Content-Encoding coldsync cannot decode: zstd"));
    expect(() => bodyText({ "content-encoding": "gzip" }, gzipSync(utf8).subarray(0, 20))).toThrow();
  });

  it("decodes a declared charset other than UTF-8", () => {
    const latin1 = Buffer.from('{"name":"Café Crème"}', "latin1");
    expect(bodyText({ "content-type": 'application/json; charset="ISO-8859-1"' }, latin1).text).toBe('{"name":"Café Crème"}');
    expect(bodyText({ "content-type": "application/json;charset=koi8-r" }, Buffer.from([0x22, 0xe1, 0x22])).text).toBe('"А"');
  });

  it("reads UTF-16 without a byte order mark (.NET's Encoding.Unicode), labelled as such or not labelled, though its bytes are valid UTF-8", () => {
    const littleEndian = Buffer.from(JSON_TEXT, "utf16le");
    const bigEndian = Buffer.from(littleEndian).swap16();
    for (const contentType of ["application/json; charset=utf-16le", "application/json; charset=utf-16", "application/json"]) {
      expect(bodyText({ "content-type": contentType }, littleEndian)).toEqual({ text: JSON_TEXT, escaped: false });
    }
    expect(bodyText({ "content-type": "application/json; charset=utf-16be" }, bigEndian)).toEqual({ text: JSON_TEXT, escaped: false });
    expect(bodyText({}, Buffer.concat([Buffer.from([0xfe, 0xff]), bigEndian]))).toEqual({ text: JSON_TEXT, escaped: false });
  });

  it("turns each byte that is not UTF-8 into the lone surrogate U+DC80 + byte, keeping every well-formed character", () => {
    const mixed = Buffer.concat([Buffer.from('{"a":"Caf', "utf8"), Buffer.from([0xe9]), Buffer.from(' ✓ ', "utf8"), Buffer.from([0xe2, 0x9c]), Buffer.from('","b":"ok"}', "utf8")]);
    expect(bodyText({ "content-type": "application/json" }, mixed)).toEqual({ text: '{"a":"Caf\udce9 ✓ \udce2\udc9c","b":"ok"}', escaped: true });
    // Overlong forms and encoded surrogates are not UTF-8 either.
    expect(bodyText({}, Buffer.from([0xc0, 0xaf, 0xed, 0xa0, 0x80])).text).toBe("\udcc0\udcaf\udced\udca0\udc80");
    // An unknown charset label reads as UTF-8.
    expect(bodyText({ "content-type": "application/json; charset=x-unheard-of" }, utf8).text).toBe(JSON_TEXT);
  });
});
