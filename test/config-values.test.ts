import { describe, expect, it } from "vitest";
import { loadConfig, type ConfigError } from "../src/config.ts";

/** Values that pass a type check and still cannot work: refused up front, named by their variable. */

function problemsOf(env: Record<string, string>, requirements: Parameters<typeof loadConfig>[1] = []): string[] | "accepted" {
  try {
    loadConfig(env, requirements);
    return "accepted";
  } catch (error) {
    return (error as ConfigError).problems;
  }
}

describe("configuration that cannot work is refused by its name", () => {
  it("refuses a COLDSYNC_API_KEY that no HTTP header can carry (a pasted non-ASCII character, a control character)", () => {
    // undici refuses such a header on every request ("invalid x-api-key header").
    for (const key of ["ключ-secret-123", "abc\u0001defghij", "abc\ndefghij"]) {
      expect({ key, problems: problemsOf({ COLDSYNC_API_KEY: key }, ["apiKey"]) }).toEqual({
        key,
        problems: [expect.stringMatching(/^COLDSYNC_API_KEY: /)],
      });
    }
  });

  it("refuses a COLDSYNC_HTTP_TOKEN no Authorization header can carry", () => {
    expect(problemsOf({ COLDSYNC_HTTP_TOKEN: "jeton-sécurisé" })).toEqual([expect.stringMatching(/^COLDSYNC_HTTP_TOKEN: must be visible ASCII/)]);
    expect(problemsOf({ COLDSYNC_HTTP_TOKEN: "s3cr3t-T0ken_~!" })).toBe("accepted");
  });

  it("refuses a COLDSYNC_HTTP_HOST that is no host name or address (a URL pasted in its place)", () => {
    // The worker died with `coldsync: getaddrinfo ENOTFOUND http://0.0.0.0` (exit 1).
    expect(problemsOf({ COLDSYNC_HTTP_HOST: "http://0.0.0.0" })).toEqual([expect.stringMatching(/^COLDSYNC_HTTP_HOST: /)]);
    expect(problemsOf({ COLDSYNC_HTTP_HOST: "0.0.0.0:9464" })).toEqual([expect.stringMatching(/^COLDSYNC_HTTP_HOST: /)]);
    for (const host of ["0.0.0.0", "::", "localhost", "worker-1.internal"]) expect(problemsOf({ COLDSYNC_HTTP_HOST: host })).toBe("accepted");
  });
});
