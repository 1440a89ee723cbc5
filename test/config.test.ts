import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, loadLogLevel } from "../src/config.ts";

/** The problem lines loadConfig reports for `env`, or "accepted". */
function problemsOf(env: Record<string, string>): string[] | "accepted" {
  try {
    loadConfig(env);
    return "accepted";
  } catch (error) {
    return (error as ConfigError).problems;
  }
}

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
    // An empty user information is no part of a base address either, though the parsed URL keeps no trace of it.
    expect(problem("http://@api.example.com")).toEqual([expect.stringMatching(/^COLDSYNC_API_URL: must not carry a user name or password/)]);
    expect(problem("http://:@api.example.com")).toEqual([expect.stringMatching(/^COLDSYNC_API_URL: must not carry a user name or password/)]);
    expect(problem("https://api.example.com/?key=k")).toEqual([expect.stringMatching(/^COLDSYNC_API_URL: must not carry a query/)]);
    // An empty query or fragment is refused as a filled one is: its marker alone is no part of a base address.
    expect(problem("http://api.example.com/api/v1/?")).toEqual([expect.stringMatching(/^COLDSYNC_API_URL: must not carry a query or a fragment/)]);
    expect(problem("http://api.example.com/#")).toEqual([expect.stringMatching(/^COLDSYNC_API_URL: must not carry a query or a fragment/)]);
    expect(loadConfig({ COLDSYNC_API_URL: "https://api.example.com:8443/base/" }).api.url).toBe("https://api.example.com:8443/base");
  });

  it("refuses a DATABASE_URL or REDIS_URL its client could not parse, naming the variable and what it expects", () => {
    const invalidPostgres = /^DATABASE_URL: must be a valid postgres:\/\/ or postgresql:\/\/ URL \(a host, and a port from 1 to 65535 if any\)$/;
    expect(problemsOf({ DATABASE_URL: "postgres://db.example:99999/warehouse" })).toEqual([expect.stringMatching(invalidPostgres)]);
    expect(problemsOf({ DATABASE_URL: "postgres://[broken/warehouse" })).toEqual([expect.stringMatching(invalidPostgres)]);
    expect(problemsOf({ DATABASE_URL: "postgres://db.example:0/warehouse" })).toEqual([expect.stringMatching(invalidPostgres)]);
    expect(problemsOf({ DATABASE_URL: "mysql://db.example/warehouse" })).toEqual(["DATABASE_URL: must be a postgres:// or postgresql:// URL"]);
    const invalidRedis = /^REDIS_URL: must be a valid redis:\/\/ or rediss:\/\/ URL /;
    expect(problemsOf({ REDIS_URL: "redis://127.0.0.1:notaport" })).toEqual([expect.stringMatching(invalidRedis)]);
    expect(problemsOf({ REDIS_URL: "redis://127.0.0.1:99999" })).toEqual([expect.stringMatching(invalidRedis)]);
    expect(problemsOf({ REDIS_URL: "http://127.0.0.1:6379" })).toEqual(["REDIS_URL: must be a redis:// or rediss:// URL"]);
    // What the clients read from a URL besides its address: node-postgres a ?port= over the address's; ioredis the
    // path, else ?db=, as the database number (SELECT NaN for one that is not).
    for (const url of ["postgres://db.example:5432/warehouse?port=abc", "postgres://db.example/warehouse?port=99999"]) {
      expect(problemsOf({ DATABASE_URL: url })).toEqual(["DATABASE_URL: must carry a port from 1 to 65535 in ?port= if any (it overrides the address's)"]);
    }
    expect(loadConfig({ DATABASE_URL: "postgres://db.example/warehouse?port=6432" }).warehouse.databaseUrl).toBe("postgres://db.example/warehouse?port=6432");
    for (const url of ["redis://127.0.0.1:6379/abc", "redis://127.0.0.1:6379/1/2", "redis://127.0.0.1:6379?db=two"]) {
      expect(problemsOf({ REDIS_URL: url })).toEqual(["REDIS_URL: must name its database by number, if at all (redis://host:6379/0)"]);
    }
    expect(loadConfig({ REDIS_URL: "redis://127.0.0.1:6379/?db=3" }).redis.url).toBe("redis://127.0.0.1:6379/?db=3");
    // What the clients read: credentials, a query, a socket's empty host.
    const config = loadConfig({ DATABASE_URL: "postgresql://u:p@ss@db.example:5432/warehouse?sslmode=require", REDIS_URL: "rediss://:pw@cache:6380/2" });
    expect(config.warehouse.databaseUrl).toBe("postgresql://u:p@ss@db.example:5432/warehouse?sslmode=require");
    expect(config.redis.url).toBe("rediss://:pw@cache:6380/2");
    expect(loadConfig({ DATABASE_URL: "postgres:///warehouse?host=/var/run/postgresql" }).warehouse.databaseUrl).toBe("postgres:///warehouse?host=/var/run/postgresql");
  });

  it("reads numbers as plain decimal digits only, within each setting's range", () => {
    expect(problemsOf({ COLDSYNC_HTTP_PORT: "0x10" })).toEqual(["COLDSYNC_HTTP_PORT: must be a port number"]);
    expect(problemsOf({ COLDSYNC_HTTP_PORT: "-1" })).toEqual(["COLDSYNC_HTTP_PORT: must be a port number"]);
    expect(problemsOf({ COLDSYNC_HTTP_PORT: "65536" })).toEqual(["COLDSYNC_HTTP_PORT: must be a port number from 0 to 65535"]);
    for (const text of ["0x10", "1e3", "2.5", "0", "Infinity"]) {
      expect(problemsOf({ COLDSYNC_RATE_LIMIT: text })).toEqual(["COLDSYNC_RATE_LIMIT: must be a positive integer"]);
    }
    expect(problemsOf({ COLDSYNC_MAX_RETRIES: "1e1" })).toEqual(["COLDSYNC_MAX_RETRIES: must be an integer from 0 to 20"]);
    expect(problemsOf({ COLDSYNC_MAX_RETRIES: "21" })).toEqual(["COLDSYNC_MAX_RETRIES: must be an integer from 0 to 20"]);
    expect(problemsOf({ COLDSYNC_CONCURRENCY: "0b11" })).toEqual(["COLDSYNC_CONCURRENCY: must be a positive integer"]);
    const config = loadConfig({ COLDSYNC_HTTP_PORT: "0", COLDSYNC_MAX_RETRIES: "0", COLDSYNC_RATE_LIMIT: " 25 ", COLDSYNC_HTTP_CONCURRENCY: "08" });
    expect([config.http.port, config.api.maxRetries, config.api.rateLimit, config.api.concurrency]).toEqual([0, 0, 25, 8]);
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

  it("refuses a setting spelt in the wrong case: the environment's names are case-sensitive, and it would keep its default", () => {
    expect(problemsOf({ coldsync_rate_limit: "50", Coldsync_Api_Ur: "http://x" })).toEqual([
      "coldsync_rate_limit: is not a coldsync setting; did you mean COLDSYNC_RATE_LIMIT?",
      "Coldsync_Api_Ur: is not a coldsync setting; did you mean COLDSYNC_API_URL?",
    ]);
  });

  it("refuses a schema PostgreSQL keeps for itself", () => {
    const kept = "COLDSYNC_SCHEMA: must not be information_schema or start with pg_ (PostgreSQL keeps them for its own schemas)";
    expect(problemsOf({ COLDSYNC_SCHEMA: "pg_coldsync" })).toEqual([kept]);
    expect(problemsOf({ COLDSYNC_SCHEMA: "information_schema" })).toEqual([kept]);
    expect(loadConfig({ COLDSYNC_SCHEMA: "pgwarehouse" }).warehouse.schema).toBe("pgwarehouse");
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

  it("says what a valid value is for a rhythm that can be switched off, as for any other duration", () => {
    for (const name of ["COLDSYNC_EVENTS_EVERY", "COLDSYNC_TERMINAL_REWALK_EVERY", "COLDSYNC_VERIFY_EVERY"]) {
      expect(problemsOf({ [name]: "5x" })).toEqual([`${name}: must be a duration such as 30s, 5m, 1h or a number of milliseconds, or off`]);
      expect(problemsOf({ [name]: "0" })).toEqual([`${name}: must be longer than zero`]);
      expect(problemsOf({ [name]: "25d" })).toEqual([`${name}: must be at most 24d (a longer timer would fire at once)`]);
    }
    expect(loadConfig({ COLDSYNC_TERMINAL_REWALK_EVERY: " off " }).worker.terminalRewalkEveryMs).toBeUndefined();
  });

  it("keeps finished runs 30 days unless COLDSYNC_RUN_RETENTION says otherwise, longer than a timer could wait, or for ever", () => {
    expect(loadConfig({}).runRetentionMs).toBe(30 * 86_400_000);
    expect(loadConfig({ COLDSYNC_RUN_RETENTION: "400d" }).runRetentionMs).toBe(400 * 86_400_000);
    expect(loadConfig({ COLDSYNC_RUN_RETENTION: "off" }).runRetentionMs).toBeUndefined();
  });

  it("refuses a run retention under a day (a bare number is milliseconds: 30 would keep nothing) or past a century", () => {
    expect(problemsOf({ COLDSYNC_RUN_RETENTION: "30" })).toEqual(["COLDSYNC_RUN_RETENTION: must be at least 1d (a bare number is milliseconds), or off"]);
    expect(problemsOf({ COLDSYNC_RUN_RETENTION: "23h" })).toEqual(["COLDSYNC_RUN_RETENTION: must be at least 1d (a bare number is milliseconds), or off"]);
    expect(problemsOf({ COLDSYNC_RUN_RETENTION: "36501d" })).toEqual(["COLDSYNC_RUN_RETENTION: must be at most 36500d, or off"]);
    expect(problemsOf({ COLDSYNC_RUN_RETENTION: "a month" })).toEqual([
      "COLDSYNC_RUN_RETENTION: must be a duration such as 30s, 5m, 1h or a number of milliseconds, or off",
    ]);
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
    // Spaces around a value are read away as every other variable's are; a wrong one is named in the project's words.
    expect(loadLogLevel({ COLDSYNC_LOG_LEVEL: " debug " })).toBe("debug");
    expect(() => loadLogLevel({ COLDSYNC_LOG_LEVEL: "loud" })).toThrow("COLDSYNC_LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent");
    expect(() => loadConfig({ COLDSYNC_ACCOUNT: "a".repeat(256) })).toThrow("COLDSYNC_ACCOUNT: must be at most 255 characters");
  });
});
