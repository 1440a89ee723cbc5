import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { createLogger } from "../src/logger.ts";
import { secretsOf } from "../src/secrets.ts";
import { readableForms } from "./upstream/support.ts";

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

  it("never prints a key spelled as JSON, a URL or HTML spells it, and keeps every line JSON", () => {
    const key = "sk_live/7fQ+x9Zr2Lk";
    const { lines, destination } = capture();
    const logger = createLogger({ secrets: [key], destination });
    logger.warn(String.raw`cut answer: {"note": "\u0073k_live\/7fQ+x9Zr2Lk"`);
    logger.info({ url: `https://t.example/?key=${encodeURIComponent(key).replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase())}` }, "lower-case percent-encoding");
    logger.info({ url: `https://t.example/?key=${encodeURIComponent(key).replace(/%2F/g, "/")}` }, "'/' left as is");
    logger.error({ err: new Error(`<p>refused ${key.replace("/", "&#x2F;").replace("+", "&#43;")}</p>`) }, "an HTML page");
    logger.info({ note: `a backslash, then the key: \\${key}` }, "after a backslash");

    expect(lines).toHaveLength(5);
    for (const line of lines) {
      expect(() => JSON.parse(line) as unknown, line).not.toThrow();
      expect(readableForms(line).some((form) => form.includes(key)), line).toBe(false);
      expect(readableForms(JSON.stringify(JSON.parse(line))).some((form) => form.includes(key)), line).toBe(false);
    }
    expect(JSON.parse(lines[0] as string)).toMatchObject({ msg: 'cut answer: {"note": "[REDACTED]"' });
    expect(JSON.parse(lines[4] as string)).toMatchObject({ note: "a backslash, then the key: \\[REDACTED]" });
  });

  it("never prints the passwords of DATABASE_URL and REDIS_URL, as written or decoded", () => {
    const config = loadConfig({
      COLDSYNC_API_KEY: KEY,
      DATABASE_URL: "postgres://coldsync:pg%2Fsecret-91@db.internal:5432/coldsync",
      REDIS_URL: "redis://:redis-secret-42@cache.internal:6379/0",
    });
    const { lines, destination } = capture();
    const logger = createLogger({ secrets: secretsOf(config), destination });
    logger.warn({ url: config.warehouse.databaseUrl }, "as configured");
    logger.warn({ err: new Error("password pg/secret-91 refused") }, "decoded");
    logger.warn({ err: new Error("WRONGPASS for redis-secret-42") }, "in a message");

    expect(lines).toHaveLength(3);
    for (const line of lines) for (const secret of ["pg%2Fsecret-91", "pg/secret-91", "redis-secret-42"]) expect(line).not.toContain(secret);
    expect(lines[0]).toContain("postgres://coldsync:[REDACTED]@db.internal");
  });

  it("never prints the token of the HTTP endpoints", () => {
    const config = loadConfig({ COLDSYNC_HTTP_TOKEN: "dashboard-token-5521" });
    const { lines, destination } = capture();
    const logger = createLogger({ secrets: secretsOf(config), destination });
    logger.warn({ headers: { authorization: "Bearer dashboard-token-5521" } }, "a request as a proxy would log it");
    expect(lines[0]).toContain('"authorization":"Bearer [REDACTED]"');
  });

  it("never prints a password given as a URL's query parameter, which pg and ioredis read too", () => {
    const config = loadConfig({
      DATABASE_URL: "postgres://coldsync@db.internal/coldsync?sslmode=require&password=pg+query%2Fsecret",
      REDIS_URL: "redis://cache.internal:6379/0?PASSWORD=redis-query-secret",
    });
    const { lines, destination } = capture();
    const logger = createLogger({ secrets: secretsOf(config), destination });
    logger.warn({ url: config.warehouse.databaseUrl }, "as configured");
    logger.warn({ err: new Error("password pg query/secret refused") }, "decoded");
    logger.warn({ err: new Error("WRONGPASS for redis-query-secret") }, "in a message");

    expect(lines).toHaveLength(3);
    for (const line of lines) for (const secret of ["pg+query%2Fsecret", "pg query/secret", "redis-query-secret"]) expect(line).not.toContain(secret);
    expect(lines[0]).toContain("password=[REDACTED]");
  });

  it("keeps a line JSON when a secret's digits stand outside its strings: a numeric password and a number field", () => {
    // A password of digits is plausible in DATABASE_URL or REDIS_URL (secretsOf takes both).
    const { lines, destination } = capture();
    const logger = createLogger({ secrets: ["12345678"], destination });
    logger.info({ rows: 123456789 }, "batch written");
    logger.warn({ err: new Error("password 12345678 refused") }, "in a message");
    logger.info({ echoed: [12345678], count: 12345678 }, "the password as a whole number");

    expect(lines).toHaveLength(3);
    for (const line of lines) expect(() => JSON.parse(line) as unknown, line).not.toThrow();
    expect(JSON.parse(lines[0] as string)).toMatchObject({ rows: 123456789, msg: "batch written" });
    expect(lines[1]).not.toContain("12345678");
    expect(JSON.parse(lines[2] as string)).toMatchObject({ echoed: ["[REDACTED]"], count: "[REDACTED]" });
  });

  it("drops the arguments of a Redis command that can hold a password, and only those", () => {
    // The shape of the ReplyError ioredis raises when Redis refuses the password in REDIS_URL.
    const refused = Object.assign(new Error("WRONGPASS invalid username-password pair or user is disabled."), { command: { name: "auth", args: ["pw-not-a-known-secret"] } });
    const failedGet = Object.assign(new Error("WRONGTYPE"), { command: { name: "get", args: ["coldsync:meta"] } });
    const { lines, destination } = capture();
    const logger = createLogger({ destination });
    logger.warn({ err: refused }, "Redis is unreachable");
    logger.warn({ err: failedGet }, "a command failed");

    expect(lines[0]).not.toContain("pw-not-a-known-secret");
    expect(JSON.parse(lines[0] as string)).toMatchObject({ err: { message: refused.message, command: { name: "auth" } } });
    expect(JSON.parse(lines[1] as string)).toMatchObject({ err: { command: { name: "get", args: ["coldsync:meta"] } } });
    // What is logged is a copy: the error itself keeps its command.
    expect(refused.command.args).toEqual(["pw-not-a-known-secret"]);
  });

  it("leaves other values alone", () => {
    const { lines, destination } = capture();
    createLogger({ secrets: [KEY], destination }).info({ campaignUid: "cmp_1" }, "synced");
    expect(JSON.parse(lines[0] as string)).toMatchObject({ campaignUid: "cmp_1", msg: "synced" });
  });
});
