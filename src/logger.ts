import { pino, type DestinationStream, type Logger, type LoggerOptions } from "pino";

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

const REDACTED = "[REDACTED]";

export interface LoggerSettings {
  level?: LoggerOptions["level"];
  /** Literal values never to print, wherever they turn up in a line (e.g. the API key inside a URL). */
  secrets?: readonly (string | undefined)[];
  /** Lines to drop: given a line's fields, true keeps it out of the output (a repeat of a known outage). */
  quiet?: (fields: Record<string, unknown>) => boolean;
  destination?: DestinationStream;
  name?: string;
}

/**
 * The one logger factory. Besides path redaction, every written line is scrubbed
 * of the literal secrets, so a key that slips into a message or an error text
 * still never reaches the output.
 */
export function createLogger(settings: LoggerSettings = {}): Logger {
  const secrets = (settings.secrets ?? []).filter((secret): secret is string => typeof secret === "string" && secret.length > 0);
  const options: LoggerOptions = {
    level: settings.level ?? "info",
    name: settings.name ?? "coldsync",
    redact: { paths: REDACTED_PATHS, censor: REDACTED },
    hooks: {
      ...(secrets.length === 0 ? {} : { streamWrite: secretScrubber(secrets) }),
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
 * A function that replaces each secret as written, as it reads inside a JSON string (a key with a quote or a
 * backslash is escaped in a log line) and as it reads in a URL (percent-encoded), longest form first. The forms
 * are worked out once: the function runs on every line written.
 */
export function secretScrubber(secrets: readonly string[]): (text: string) => string {
  const forms = [...new Set(secrets.flatMap((secret) => [secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)]))];
  forms.sort((a, b) => b.length - a.length);
  return (text) => {
    let scrubbed = text;
    for (const form of forms) scrubbed = scrubbed.split(form).join(REDACTED);
    return scrubbed;
  };
}
