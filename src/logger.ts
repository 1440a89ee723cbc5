import { format } from "node:util";
import { pino, stdSerializers, type DestinationStream, type Logger, type LoggerOptions, type SerializedError } from "pino";
import { REDACTED, secretScrubber } from "./scrub.ts";

export type { Logger } from "pino";

/** Paths that may carry the upstream API key; pino replaces their values. */
export const REDACTED_PATHS = [
  "apiKey",
  "key",
  "*.apiKey",
  "*.key",
  "headers['x-api-key']",
  "*.headers['x-api-key']",
  "headers['X-Api-Key']",
  "*.headers['X-Api-Key']",
  "req.headers['x-api-key']",
  "request.headers['x-api-key']",
  "config.api.key",
  "api.key",
];

/**
 * Redis commands whose arguments can hold a password (AUTH's, HELLO's AUTH option, MIGRATE's). ioredis attaches
 * the failed command to a reply error, so a refused AUTH would print the password of REDIS_URL as it was sent.
 */
const COMMANDS_WITH_PASSWORDS = new Set(["auth", "hello", "migrate"]);

/** pino's error serializer, without the arguments of a Redis command that can hold a password. */
function serializeError(error: Error | null | undefined): SerializedError | null | undefined {
  // pino hands over whatever a line holds under `err`, null included; the serializer passes a value that is not an error as it came.
  const serialized = error === null || error === undefined ? error : stdSerializers.err(error);
  const name: unknown = serialized?.command?.name;
  if (serialized === null || serialized === undefined || typeof name !== "string" || !COMMANDS_WITH_PASSWORDS.has(name.toLowerCase())) return serialized;
  // A copy: the serialized error shares `command` with the error (and a value that is not one is the caller's own object).
  return { ...serialized, command: { name } };
}

export interface LoggerSettings {
  level?: LoggerOptions["level"];
  /** Literal values never to print, wherever they turn up in a line (e.g. the API key inside a URL, a database password). */
  secrets?: readonly (string | undefined)[];
  /** Lines to drop: given a line's fields, true keeps it out of the output (a repeat of a known outage). */
  quiet?: (fields: Record<string, unknown>) => boolean;
  destination?: DestinationStream;
  name?: string;
}

/**
 * The one logger factory. Besides path redaction, every written line is scrubbed
 * of the secrets in any spelling (scrub.ts), so a key that slips into a message
 * or an error text still never reaches the output. A line is JSON, scrubbed as
 * JSON: it stays a valid line.
 */
export function createLogger(settings: LoggerSettings = {}): Logger {
  const secrets = (settings.secrets ?? []).filter((secret): secret is string => typeof secret === "string" && secret.length > 0);
  const options: LoggerOptions = {
    level: settings.level ?? "info",
    name: settings.name ?? "coldsync",
    redact: { paths: REDACTED_PATHS, censor: REDACTED },
    serializers: { err: serializeError },
    hooks: {
      ...(secrets.length === 0 ? {} : { streamWrite: secretScrubber(secrets, { json: true }) }),
      ...(settings.quiet === undefined
        ? {}
        : {
            logMethod(this: Logger, args: Parameters<Logger["info"]>, method: (...args: Parameters<Logger["info"]>) => void) {
              const [first] = args;
              if (typeof first === "object" && first !== null && settings.quiet?.(first as Record<string, unknown>)) return;
              method.apply(this, args);
            },
          }),
    },
  };
  return settings.destination ? pino(options, settings.destination) : pino(options);
}

/**
 * Sends what libraries write to the console (BullMQ's "Eviction policy is volatile-lru" warning, ioredis's "does
 * not require a password") through `logger`, as JSON lines like every other: a process whose output is JSON lines
 * writes nothing else, and a secret in such a line is scrubbed like any other.
 */
export function logConsoleThrough(logger: Logger): void {
  const through = (level: "info" | "warn" | "error") => (...args: unknown[]) => logger[level]({ from: "console" }, format(...args));
  /* eslint-disable no-console -- replacing the console's methods is what this does */
  console.log = through("info");
  console.info = through("info");
  console.warn = through("warn");
  console.error = through("error");
  /* eslint-enable no-console */
}
