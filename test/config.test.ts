import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, loadLogLevel } from "../src/config.ts";

describe("loadConfig", () => {
  it("fills every setting with its documented default", () => {
    const config = loadConfig({});
    expect(config.api.url).toBe("http://127.0.0.1:4010");
    expect(config.account).toBe("default");
    expect(config.warehouse.schema).toBe("coldsync");
    expect(config.warehouse.databaseUrl).toBeUndefined();
    expect(config.worker.discoverEveryMs).toBe(5 * 60_000);
  });

  it("strips a trailing /api/v1/ from the base address", () => {
    expect(loadConfig({ COLDSYNC_API_URL: "https://api.example.com/api/v1/" }).api.url).toBe("https://api.example.com");
  });

  it("refuses an API address the upstream client could not use, naming the variable", () => {
    const problem = (url: string) => {
      try {
        loadConfig({ COLDSYNC_API_URL: url });
        return "accepted";
      } catch (error) {
        return (error as ConfigError).problems;
      }
    };
    expect(problem("http://127.0.0.1:99999")).toEqual([expect.stringMatching(/^COLDSYNC_API_URL: must be a valid http/)]);
    expect(problem("http://127.0.0.1:0")).toEqual([expect.stringMatching(/^COLDSYNC_API_URL: must be a valid http/)]);
    expect(problem("http://")).toEqual([expect.stringMatching(/^COLDSYNC_API_URL: /)]);
    expect(problem("https://user:secret@api.example.com")).toEqual([expect.stringMatching(/^COLDSYNC_API_URL: must not carry a user name or password/)]);
    expect(problem("https://api.example.com/?key=k")).toEqual([expect.stringMatching(/^COLDSYNC_API_URL: must not carry a query/)]);
    expect(loadConfig({ COLDSYNC_API_URL: "https://api.example.com:8443/base/" }).api.url).toBe("https://api.example.com:8443/base");
  });

  it("reports one line per problem and names each variable", () => {
    const attempt = () =>
      loadConfig({ COLDSYNC_API_URL: "ftp://x", COLDSYNC_SCHEMA: "Bad-Name", COLDSYNC_DISCOVER_EVERY: "soon" }, ["apiKey"]);
    expect(attempt).toThrow(ConfigError);
    try {
      attempt();
    } catch (error) {
      const problems = (error as ConfigError).problems;
      expect(problems).toHaveLength(4);
      expect(problems.join("\n")).toMatch(/COLDSYNC_API_KEY: is required/);
      expect(problems.join("\n")).toMatch(/COLDSYNC_API_URL/);
      expect(problems.join("\n")).toMatch(/COLDSYNC_SCHEMA/);
      expect(problems.join("\n")).toMatch(/COLDSYNC_DISCOVER_EVERY/);
    }
  });

  it("refuses a COLDSYNC_ variable that is not a setting, one line each, suggesting the setting it is a slip for", () => {
    try {
      loadConfig({ COLDSYNC_RATE_LIMT: "2", COLDSYNC_HTTP_PROT: "80", COLDSYNC_PORT: "80", COLDSYNC_LOG_LEVEL: "debug" });
      expect.unreachable();
    } catch (error) {
      expect((error as ConfigError).problems).toEqual([
        "COLDSYNC_RATE_LIMT: is not a coldsync setting; did you mean COLDSYNC_RATE_LIMIT?",
        "COLDSYNC_HTTP_PROT: is not a coldsync setting; did you mean COLDSYNC_HTTP_PORT?",
        "COLDSYNC_PORT: is not a coldsync setting (README, Configuration, lists them)",
      ]);
    }
    expect(() => loadLogLevel({ COLDSYNC_LOG_LEVL: "debug" })).toThrow(/COLDSYNC_LOG_LEVL: is not a coldsync setting; did you mean COLDSYNC_LOG_LEVEL\?/);
  });

  it("lets through what is no setting's business: blank COLDSYNC_ variables, the test suite's own, other programs'", () => {
    expect(loadConfig({ COLDSYNC_RATE_LIMT: " ", COLDSYNC_DOCS_SCREENSHOT: "1", RATE_LIMT: "2" }).api.rateLimit).toBe(10);
  });

  it("requires the API key only for commands that need it", () => {
    expect(() => loadConfig({}, ["apiKey"])).toThrow(/COLDSYNC_API_KEY: is required/);
    expect(loadConfig({ COLDSYNC_API_KEY: "k" }, ["apiKey"]).api.key).toBe("k");
  });

  it("refuses durations a timer cannot wait: zero, and longer than 24 days", () => {
    expect(() => loadConfig({ COLDSYNC_DISCOVER_EVERY: "0" })).toThrow(/COLDSYNC_DISCOVER_EVERY: must be longer than zero/);
    expect(() => loadConfig({ COLDSYNC_REQUEST_TIMEOUT: "0s" })).toThrow(/COLDSYNC_REQUEST_TIMEOUT: must be longer than zero/);
    expect(() => loadConfig({ COLDSYNC_TERMINAL_EVERY: "25d" })).toThrow(/COLDSYNC_TERMINAL_EVERY: must be at most 24d/);
    expect(loadConfig({ COLDSYNC_TERMINAL_EVERY: "24d" }).worker.terminalEveryMs).toBe(24 * 86_400_000);
  });

  it("reads off as never for the rhythms that can be switched off", () => {
    expect(loadConfig({ COLDSYNC_EVENTS_EVERY: "off" }).worker.eventsEveryMs).toBeUndefined();
    expect(loadConfig({ COLDSYNC_VERIFY_EVERY: "off" }).worker.verifyEveryMs).toBeUndefined();
    expect(loadConfig({ COLDSYNC_VERIFY_EVERY: "6h" }).worker.verifyEveryMs).toBe(6 * 3_600_000);
    expect(loadConfig({}).worker.verifyEveryMs).toBeUndefined();
    expect(() => loadConfig({ COLDSYNC_DISCOVER_EVERY: "off" })).toThrow(/COLDSYNC_DISCOVER_EVERY/);
  });

  it("treats empty and blank variables as unset", () => {
    expect(loadConfig({ DATABASE_URL: "" }).warehouse.databaseUrl).toBeUndefined();
    expect(loadConfig({ DATABASE_URL: " " }).warehouse.databaseUrl).toBeUndefined();
    // Not 0, which z.coerce.number makes of a blank: no retries, any port.
    expect(loadConfig({ COLDSYNC_MAX_RETRIES: " " }).api.maxRetries).toBe(6);
    expect(loadConfig({ COLDSYNC_HTTP_PORT: "\t" }).http.port).toBe(9464);
    expect(() => loadConfig({ COLDSYNC_API_KEY: "  " }, ["apiKey"])).toThrow(/COLDSYNC_API_KEY: is required/);
  });
});

describe("loadLogLevel", () => {
  it("reads COLDSYNC_LOG_LEVEL as loadConfig does, ignoring the settings it does not need", () => {
    expect(loadLogLevel({})).toBe("info");
    expect(loadLogLevel({ COLDSYNC_LOG_LEVEL: "warn", COLDSYNC_API_URL: "ftp://x" })).toBe("warn");
    expect(() => loadLogLevel({ COLDSYNC_LOG_LEVEL: "loud" })).toThrow(/COLDSYNC_LOG_LEVEL: /);
  });
});
