import { isIP } from "node:net";
import { z } from "zod";
import { closest, distance } from "fastest-levenshtein";

/**
 * Every setting coldsync reads from the environment. Each has a documented
 * default (README, "Configuration"); `loadConfig` turns every problem into one
 * line, so a bad deployment stops before it touches anything.
 */

const DURATION_UNITS_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** "500ms", "30s", "5m", "1h", "1d", or a bare number of milliseconds (plain decimal digits). */
const DURATION = /^(\d+)(ms|s|m|h|d)?$/;

const DURATION_FORMAT = "a duration such as 30s, 5m, 1h or a number of milliseconds";

/** The longest wait a Node.js timer keeps: a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A text DURATION matches, in milliseconds. */
function milliseconds(text: string): number {
  const match = DURATION.exec(text);
  const amount = Number(match?.[1]);
  const unit = (match?.[2] ?? "ms") as keyof typeof DURATION_UNITS_MS;
  return amount * DURATION_UNITS_MS[unit];
}

const timerRange = z.number().min(1, "must be longer than zero").max(MAX_TIMER_MS, "must be at most 24d (a longer timer would fire at once)");

/** A DURATION; more than zero and at most 24 days. */
export const duration = z.string().trim().regex(DURATION, `must be ${DURATION_FORMAT}`).transform(milliseconds).pipe(timerRange);

/**
 * A duration in `range`, or "off" (undefined). Not a union of the two: zod would answer a value both refuse with a
 * bare "Invalid input".
 */
function durationOrOffIn(range: z.ZodNumber) {
  return z
    .string()
    .trim()
    .refine((text) => text === "off" || DURATION.test(text), `must be ${DURATION_FORMAT}, or off`)
    .transform((text) => (text === "off" ? undefined : milliseconds(text)))
    .pipe(range.optional());
}

const durationOrOff = durationOrOffIn(timerRange);

/**
 * How long something is kept: no timer waits for it, so it may be longer than 24d, but at least a day, since a
 * bare number is milliseconds (`30` would keep nothing), and at most a century.
 */
const retentionOrOff = durationOrOffIn(
  z.number().min(DURATION_UNITS_MS.d, "must be at least 1d (a bare number is milliseconds), or off").max(36_500 * DURATION_UNITS_MS.d, "must be at most 36500d, or off"),
);

/**
 * Plain decimal digits, read as a number: z.coerce.number would also read 0x10 as 16, 1e3 as 1000 and -0, 1.0
 * or Infinity as numbers, none of which the README's table allows for a count, a port or a limit.
 */
function wholeNumber(message: string) {
  return z.string().trim().regex(/^\d+$/, message).transform(Number);
}

const positiveInt = wholeNumber("must be a positive integer").pipe(z.number().int("must be a positive integer").positive("must be a positive integer"));

/**
 * `value` as a URL of one of `schemes` (written `scheme://`, with a port from 1 to 65535 if it names one), or
 * what is wrong with it: what its client would fail on later, refused here by the variable's name.
 */
function parseUrl(value: string, schemes: readonly string[]): URL | string {
  const written = schemes.map((scheme) => `${scheme}://`).join(" or ");
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (url === undefined || url.port === "0") return `must be a valid ${written} URL (a host, and a port from 1 to 65535 if any)`;
  if (!schemes.includes(url.protocol.slice(0, -1)) || !url.href.startsWith(`${url.protocol}//`)) {
    return `must be ${written.startsWith("http") ? "an" : "a"} ${written} URL`;
  }
  return url;
}

function urlRule(schemes: readonly string[], problemOf: (url: URL, written: string) => string | undefined = () => undefined) {
  return z
    .string()
    .trim()
    .check((context) => {
      const url = parseUrl(context.value, schemes);
      const problem = typeof url === "string" ? url : problemOf(url, context.value);
      if (problem !== undefined) context.issues.push({ code: "custom", message: problem, input: context.value });
    });
}

const queryPort = wholeNumber("not a port").pipe(z.number().min(1).max(65535));

/** node-postgres takes `?port=` over the address's port: one it cannot use fails it on connect. */
const postgresUrl = urlRule(["postgres", "postgresql"], (url) => {
  const port = url.searchParams.get("port");
  return port === null || queryPort.safeParse(port).success ? undefined : "must carry a port from 1 to 65535 in ?port= if any (it overrides the address's)";
});

/** ioredis reads the path (else `?db=`) as the database number, and sends `SELECT NaN` for one that is not. */
const redisUrl = urlRule(["redis", "rediss"], (url) => {
  const databases = [url.pathname === "/" ? "" : url.pathname.slice(1), url.searchParams.get("db") ?? ""];
  return databases.every((database) => /^\d*$/.test(database)) ? undefined : "must name its database by number, if at all (redis://host:6379/0)";
});

/** Whatever the upstream client would fail on later (it keeps only the origin and the path). */
function httpUrlProblem(url: URL, written: string): string | undefined {
  // An empty user information (`http://@host`) leaves both empty, but its `@` is still in what was written.
  if (url.username !== "" || url.password !== "" || /^[a-z]+:\/\/[^/?#]*@/i.test(written)) {
    return "must not carry a user name or password (the key goes in COLDSYNC_API_KEY)";
  }
  // An empty query or fragment leaves search and hash empty, but its marker (? or #) stays in href.
  if (url.search !== "" || url.hash !== "" || /[?#]/.test(url.href)) return "must not carry a query or a fragment (not even an empty ? or #)";
  return undefined;
}

const httpUrl = urlRule(["http", "https"], httpUrlProblem).transform((value) => value.replace(/\/+$/, "").replace(/\/api\/v1$/, ""));

const schemaName = z
  .string()
  .trim()
  .regex(/^[a-z_][a-z0-9_]{0,62}$/, "must be a lower-case SQL identifier (letters, digits, underscore)")
  .refine((name) => !name.startsWith("pg_") && name !== "information_schema", "must not be information_schema or start with pg_ (PostgreSQL keeps them for its own schemas)");

/** A secret sent in an HTTP header: undici refuses a header holding anything but visible ASCII, on every request. */
export const headerSecret = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .regex(/^[\x21-\x7e]+$/, "must be visible ASCII characters only (no spaces, control characters or letters outside ASCII): an HTTP header carries it");

/** Where the HTTP server listens: a host name or an IP address, as `listen` takes it. */
export const listenHost = z
  .string()
  .trim()
  .min(1, { error: "must not be empty", abort: true })
  .refine(
    (host) => isIP(host) !== 0 || /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(host),
    "must be a host name or an IP address (no scheme, port or path), such as 0.0.0.0, :: or localhost",
  );

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

export const configSchema = z.object({
  COLDSYNC_API_URL: httpUrl.default("http://127.0.0.1:4010"),
  COLDSYNC_API_KEY: headerSecret.optional(),
  COLDSYNC_ACCOUNT: z.string().trim().min(1, "must not be empty").max(255, "must be at most 255 characters").default("default"),
  DATABASE_URL: postgresUrl.optional(),
  COLDSYNC_DATA_DIR: z.string().trim().min(1).default(".coldsync"),
  COLDSYNC_SCHEMA: schemaName.default("coldsync"),
  REDIS_URL: redisUrl.default("redis://127.0.0.1:6379"),
  COLDSYNC_QUEUE_PREFIX: z.string().trim().min(1).default("coldsync"),
  COLDSYNC_RATE_LIMIT: positiveInt.default(10),
  COLDSYNC_HTTP_CONCURRENCY: positiveInt.default(4),
  COLDSYNC_REQUEST_TIMEOUT: duration.prefault("30s"),
  COLDSYNC_MAX_RETRIES: wholeNumber("must be an integer from 0 to 20").pipe(z.number().max(20, "must be an integer from 0 to 20")).default(6),
  COLDSYNC_CONCURRENCY: positiveInt.default(2),
  COLDSYNC_DISCOVER_EVERY: duration.prefault("5m"),
  COLDSYNC_ACTIVE_EVERY: duration.prefault("15m"),
  COLDSYNC_EVENTS_EVERY: durationOrOff.prefault("1m"),
  COLDSYNC_IDLE_EVERY: duration.prefault("1h"),
  COLDSYNC_TERMINAL_EVERY: duration.prefault("24h"),
  COLDSYNC_TERMINAL_REWALK_EVERY: durationOrOff.prefault("7d"),
  COLDSYNC_VERIFY_EVERY: durationOrOff.optional(),
  COLDSYNC_RUN_RETENTION: retentionOrOff.prefault("30d"),
  COLDSYNC_HTTP_PORT: wholeNumber("must be a port number").pipe(z.number().max(65535, "must be a port number from 0 to 65535")).default(9464),
  COLDSYNC_HTTP_HOST: listenHost.default("0.0.0.0"),
  COLDSYNC_HTTP_TOKEN: headerSecret.optional(),
  COLDSYNC_LOG_LEVEL: z.string().trim().pipe(z.enum(LOG_LEVELS, `must be one of ${LOG_LEVELS.join(", ")}`)).default("info"),
});

type RawConfig = z.infer<typeof configSchema>;

export interface Config {
  api: { url: string; key: string | undefined; rateLimit: number; concurrency: number; timeoutMs: number; maxRetries: number };
  account: string;
  warehouse: { databaseUrl: string | undefined; dataDir: string; schema: string };
  redis: { url: string; prefix: string };
  worker: {
    concurrency: number;
    discoverEveryMs: number;
    activeEveryMs: number;
    /** How often a started campaign's replies, clicks and opens are read; undefined ("off"): with its leads, at their cadence. */
    eventsEveryMs: number | undefined;
    idleEveryMs: number;
    terminalEveryMs: number;
    /** How long after its last walk a terminal campaign past its final walks has its leads walked again; undefined: never. */
    terminalRewalkEveryMs: number | undefined;
    /** How often the worker verifies the warehouse against the upstream; undefined: never. */
    verifyEveryMs: number | undefined;
  };
  /** How long finished sync runs and verifications are kept (sync_runs, verifications); undefined: for ever. */
  runRetentionMs: number | undefined;
  http: { port: number; host: string; token: string | undefined };
  logLevel: RawConfig["COLDSYNC_LOG_LEVEL"];
}

/** Settings a command cannot run without, on top of the schema's own rules. */
export type Requirement = "apiKey" | "databaseUrl";

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((line) => `  ${line}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

const REQUIREMENT_VARIABLE: Record<Requirement, keyof RawConfig> = {
  apiKey: "COLDSYNC_API_KEY",
  databaseUrl: "DATABASE_URL",
};

/**
 * Empty strings count as unset, the way shells and compose files hand them
 * over, and so do blank ones: every variable treats a blank the same way.
 */
function withoutBlank(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1].trim() !== ""));
}

/**
 * COLDSYNC_ variables that are not settings: the test suite's switch that also
 * refreshes the README's screenshot (test/http/status-page-e2e.test.ts). A
 * test run hands its environment to the coldsync processes it starts.
 */
const NOT_SETTINGS = ["COLDSYNC_DOCS_SCREENSHOT"];

const SETTINGS = Object.keys(configSchema.shape).filter((name) => name.startsWith("COLDSYNC_"));

/** Three edits (a swap of neighbours counts two) catch a slip of the hand without suggesting some other setting. */
const TYPO_EDITS = 3;

/**
 * A COLDSYNC_ variable coldsync does not read is most likely a misspelt
 * setting, which would silently keep its default; so is one spelt in the
 * wrong case (environment names are case-sensitive). A blank one is unset,
 * so it is no problem either.
 */
function unknownVariables(given: Record<string, string>): string[] {
  return Object.keys(given)
    .filter((name) => name.toUpperCase().startsWith("COLDSYNC_") && !Object.hasOwn(configSchema.shape, name) && !NOT_SETTINGS.includes(name))
    .map((name) => {
      const setting = closest(name.toUpperCase(), SETTINGS);
      return `${name}: is not a coldsync setting${distance(name.toUpperCase(), setting) > TYPO_EDITS ? " (README, Configuration, lists them)" : `; did you mean ${setting}?`}`;
    });
}

function problemLines(issues: z.core.$ZodIssue[]): string[] {
  return issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, requirements: Requirement[] = []): Config {
  const given = withoutBlank(env);
  const parsed = configSchema.safeParse(given);
  const problems = parsed.success ? [] : problemLines(parsed.error.issues);
  for (const requirement of requirements) {
    const variable = REQUIREMENT_VARIABLE[requirement];
    if (given[variable] === undefined) problems.push(`${variable}: is required for this command`);
  }
  problems.push(...unknownVariables(given));
  if (!parsed.success || problems.length > 0) throw new ConfigError(problems);
  const raw = parsed.data;
  return {
    api: {
      url: raw.COLDSYNC_API_URL,
      key: raw.COLDSYNC_API_KEY,
      rateLimit: raw.COLDSYNC_RATE_LIMIT,
      concurrency: raw.COLDSYNC_HTTP_CONCURRENCY,
      timeoutMs: raw.COLDSYNC_REQUEST_TIMEOUT,
      maxRetries: raw.COLDSYNC_MAX_RETRIES,
    },
    account: raw.COLDSYNC_ACCOUNT,
    warehouse: { databaseUrl: raw.DATABASE_URL, dataDir: raw.COLDSYNC_DATA_DIR, schema: raw.COLDSYNC_SCHEMA },
    redis: { url: raw.REDIS_URL, prefix: raw.COLDSYNC_QUEUE_PREFIX },
    worker: {
      concurrency: raw.COLDSYNC_CONCURRENCY,
      discoverEveryMs: raw.COLDSYNC_DISCOVER_EVERY,
      activeEveryMs: raw.COLDSYNC_ACTIVE_EVERY,
      eventsEveryMs: raw.COLDSYNC_EVENTS_EVERY,
      idleEveryMs: raw.COLDSYNC_IDLE_EVERY,
      terminalEveryMs: raw.COLDSYNC_TERMINAL_EVERY,
      terminalRewalkEveryMs: raw.COLDSYNC_TERMINAL_REWALK_EVERY,
      verifyEveryMs: raw.COLDSYNC_VERIFY_EVERY,
    },
    runRetentionMs: raw.COLDSYNC_RUN_RETENTION,
    http: { port: raw.COLDSYNC_HTTP_PORT, host: raw.COLDSYNC_HTTP_HOST, token: raw.COLDSYNC_HTTP_TOKEN },
    logLevel: raw.COLDSYNC_LOG_LEVEL,
  };
}

/**
 * COLDSYNC_LOG_LEVEL alone, for the one command that needs no other setting
 * (`coldsync emulator`): read and refused exactly as loadConfig would, and a
 * misspelt COLDSYNC_ variable stops it as it stops every other command.
 */
export function loadLogLevel(env: NodeJS.ProcessEnv = process.env): Config["logLevel"] {
  const given = withoutBlank(env);
  const parsed = configSchema.pick({ COLDSYNC_LOG_LEVEL: true }).safeParse(given);
  const problems = [...(parsed.success ? [] : problemLines(parsed.error.issues)), ...unknownVariables(given)];
  if (!parsed.success || problems.length > 0) throw new ConfigError(problems);
  return parsed.data.COLDSYNC_LOG_LEVEL;
}
