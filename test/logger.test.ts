import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../src/logger.ts";

const KEY = "sk_live_7f3a9c2e-secret";

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, destination };
}

describe("createLogger", () => {
  it("never prints the API key, wherever it turns up", () => {
    const { lines, destination } = capture();
    const logger = createLogger({ level: "trace", secrets: [KEY], destination });
    logger.info({ apiKey: KEY }, "by path");
    logger.info({ headers: { "x-api-key": KEY } }, "in headers");
    logger.info({ config: { api: { key: KEY } } }, "in config");
    logger.warn(`in the message ${KEY}`);
    logger.error({ err: new Error(`upstream said ${KEY}`) }, "in an error");
    logger.debug({ url: `https://api.example.com/?key=${KEY}` }, "in a url");

    expect(lines).toHaveLength(6);
    for (const line of lines) expect(line).not.toContain(KEY);
    expect(lines.join("")).toContain("[REDACTED]");
  });

  it("never prints a key that JSON or a URL would escape, in any of its forms", () => {
    const awkward = 'k3y"with\\quote/and space';
    const { lines, destination } = capture();
    const logger = createLogger({ secrets: [awkward], destination });
    logger.warn(`in the message ${awkward}`);
    logger.info({ headers: { "X-Api-Key": awkward } }, "in headers, as sent");
    logger.info({ url: `https://api.example.com/?key=${encodeURIComponent(awkward)}` }, "percent-encoded");

    expect(lines).toHaveLength(3);
    for (const line of lines) {
      const text = JSON.stringify(JSON.parse(line));
      expect(line).not.toContain(JSON.stringify(awkward).slice(1, -1));
      expect(line).not.toContain(encodeURIComponent(awkward));
      expect(text).toContain("[REDACTED]");
    }
  });

  it("leaves other values alone", () => {
    const { lines, destination } = capture();
    createLogger({ secrets: [KEY], destination }).info({ campaignUid: "cmp_1" }, "synced");
    expect(JSON.parse(lines[0] as string)).toMatchObject({ campaignUid: "cmp_1", msg: "synced" });
  });
});
