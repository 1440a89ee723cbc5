import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import type { Logger } from "./logger.ts";
import { UpstreamError } from "./upstream/errors.ts";
import { reachPostgres } from "./warehouse/connect.ts";

/**
 * What the worker knows of a dependency it cannot run without (Redis,
 * PostgreSQL): up or down, since when, and how many attempts it has taken to
 * get it back. An outage is logged, not shouted: one warning when the
 * dependency goes away, then one line per backoff step with the attempt count,
 * one line when it is back; everything else that only repeats the outage (a
 * failed job, a failed stream, another connection's error) is counted, not
 * printed (see `isOutageNoise`).
 */

export type DependencyName = "Redis" | "PostgreSQL";

export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 500, maxMs: 30_000 };

/**
 * The delay before reconnection attempt `attempt` (1-based): doubling from `initialMs`, capped, with ±20 %
 * jitter. Not the upstream client's full jitter (src/upstream/retry.ts): a reconnection never comes at once,
 * and the "next try in" each backoff step logs stays close to the truth.
 */
export function reconnectDelay(attempt: number, policy: BackoffPolicy = DEFAULT_BACKOFF): number {
  const base = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  // PostgreSQL: the server is shutting down, crashed, or not accepting connections yet; a connection failed.
  "57P01",
  "57P02",
  "57P03",
  "08000",
  "08001",
  "08003",
  "08006",
]);
const CONNECTION_MESSAGES =
  /Connection terminated|Connection is closed|terminating connection|connection error|Client has encountered a connection error|timeout exceeded when trying to connect|Stream isn't writeable|ECONNREFUSED|ECONNRESET|Reached the max retries per request limit|the database system is (starting up|shutting down)/i;

/** Whether an error means a dependency cannot be reached (as opposed to a query or a job that went wrong). */
export function isConnectionError(error: unknown): boolean {
  if (typeof error === "string") return CONNECTION_MESSAGES.test(error);
  // The upstream API is not a dependency: its network errors are the sync's to report, whatever else is down.
  if (!(error instanceof Error) || error instanceof UpstreamError) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && CONNECTION_CODES.has(code)) return true;
  if (CONNECTION_MESSAGES.test(error.message)) return true;
  const nested = (error as { errors?: unknown[]; cause?: unknown }).errors ?? [(error as { cause?: unknown }).cause];
  return nested.some((inner) => inner !== undefined && inner !== error && isConnectionError(inner));
}

export interface DependencyWatchOptions {
  /** Checks the dependency; with one, the watch itself retries with backoff while the dependency is down. */
  probe?: () => Promise<unknown>;
  /** Whether a connection error is this dependency's (by its port, or its client's error shapes). */
  owns?: (error: unknown) => boolean;
  policy?: BackoffPolicy;
}

export class DependencyWatch {
  readonly name: DependencyName;
  readonly owns: (error: unknown) => boolean;
  readonly #logger: Logger;
  readonly #probe: (() => Promise<unknown>) | undefined;
  readonly #policy: BackoffPolicy;
  #downSince: number | undefined;
  #attempts = 0;
  #suppressed = 0;
  #probing = false;
  readonly #recoveries: (() => void | Promise<void>)[] = [];

  constructor(name: DependencyName, logger: Logger, options: DependencyWatchOptions = {}) {
    this.name = name;
    this.#logger = logger;
    this.#probe = options.probe;
    this.owns = options.owns ?? (() => false);
    this.#policy = options.policy ?? DEFAULT_BACKOFF;
  }

  get down(): boolean {
    return this.#downSince !== undefined;
  }

  /** Called when the dependency is back after an outage (e.g. to re-create what a Redis that lost its keys forgot). */
  onRecovered(listener: () => void | Promise<void>): void {
    this.#recoveries.push(listener);
  }

  /** A connection to the dependency failed: the first failure of an outage is a warning, later ones only count. */
  failed(error: unknown): void {
    if (this.#downSince !== undefined) {
      this.#suppressed += 1;
      return;
    }
    this.#downSince = Date.now();
    this.#attempts = 0;
    this.#suppressed = 0;
    this.#logger.warn({ dependency: this.name, err: error }, `${this.name} is unreachable; retrying with backoff`);
    if (this.#probe && !this.#probing) void this.#probeUntilUp();
  }

  /** One backoff step of a reconnection the dependency's own client runs (ioredis): logged with its attempt count. */
  retrying(attempt: number, delayMs: number): void {
    if (this.#downSince === undefined) this.failed(new Error("connection lost"));
    if (attempt <= this.#attempts) return;
    this.#attempts = attempt;
    this.#logger.info({ dependency: this.name, attempt, retryInMs: delayMs }, `${this.name} still unreachable (attempt ${attempt}); next try in ${(delayMs / 1000).toFixed(1)} s`);
  }

  /** The dependency answers again. */
  recovered(): void {
    if (this.#downSince === undefined) return;
    const downForMs = Date.now() - this.#downSince;
    this.#logger.info(
      { dependency: this.name, attempts: this.#attempts, downForMs, suppressedLines: this.#suppressed },
      `${this.name} is back after ${(downForMs / 1000).toFixed(1)} s`,
    );
    this.#downSince = undefined;
    for (const listener of this.#recoveries) {
      Promise.resolve(listener()).catch((error: unknown) => this.#logger.warn({ dependency: this.name, err: error }, `could not restore what ${this.name} lost`));
    }
  }

  /** Start-up: checks with backoff until the dependency answers, saying which and when the next try is. */
  async waitUntilUp(check: () => Promise<unknown>, signal?: AbortSignal): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await check();
        if (attempt > 1) this.#logger.info({ dependency: this.name, attempts: attempt }, `${this.name} is up; starting`);
        return;
      } catch (error) {
        const delayMs = reconnectDelay(attempt, this.#policy);
        this.#logger.warn(
          { dependency: this.name, attempt, retryInMs: delayMs, err: error },
          `waiting for ${this.name} before starting (attempt ${attempt}); next try in ${(delayMs / 1000).toFixed(1)} s`,
        );
        await sleep(delayMs, undefined, { signal });
      }
    }
  }

  async #probeUntilUp(): Promise<void> {
    this.#probing = true;
    try {
      for (let attempt = 1; this.#downSince !== undefined; attempt += 1) {
        const delayMs = reconnectDelay(attempt, this.#policy);
        this.retrying(attempt, delayMs);
        await sleep(delayMs);
        try {
          await this.#probe?.();
          this.recovered();
        } catch {
          // Still down: the next step logs it.
        }
      }
    } finally {
      this.#probing = false;
    }
  }
}

/**
 * Whether a log line only says that a dependency cannot be reached (a job or a
 * stream that failed because of it, another connection's error). Such a line
 * is handed to that dependency's watch, which reports the outage once, and is
 * not printed itself.
 */
export function isOutageNoise(watches: readonly DependencyWatch[], fields: Record<string, unknown>): boolean {
  // A watch's own lines (they name their dependency) are the ones that report the outage.
  if (fields.dependency !== undefined) return false;
  const cause = fields.err ?? fields.reason ?? fields.error;
  if (!isConnectionError(cause)) return false;
  const owner = watches.find((watch) => watch.owns(cause)) ?? watches.find((watch) => watch.down);
  if (owner === undefined) return false;
  owner.failed(cause);
  return true;
}

/** Errors of a client connected to `url` (whose port they name, e.g. `connect ECONNREFUSED 127.0.0.1:6379`), or matching `shapes`. */
export function errorsOf(url: string, defaultPort: number, shapes: RegExp): (error: unknown) => boolean {
  const port = Number(new URL(url).port || defaultPort);
  return (error) => {
    const found = error as { port?: unknown; message?: unknown } | string | null | undefined;
    const message = typeof found === "string" ? found : String(found?.message ?? "");
    return (typeof found === "object" && found?.port === port) || message.includes(`:${port}`) || shapes.test(message);
  };
}

const REDIS_ERRORS = /Connection is closed|Stream isn't writeable|max retries per request|ioredis/i;
const POSTGRES_ERRORS = /Connection terminated|terminating connection|database system is|trying to connect|Client has encountered a connection error/i;

export interface WorkerDependencies {
  redis: DependencyWatch;
  postgres: DependencyWatch;
}

/** One connection, one PING, no retries: whether Redis answers right now. */
export async function reachRedis(url: string, timeoutMs = 5_000): Promise<void> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectionName: "coldsync-probe",
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  redis.on("error", () => undefined);
  try {
    await redis.connect();
    await redis.ping();
  } finally {
    redis.disconnect();
  }
}

/**
 * The worker's two watches, each probing on a connection of its own until its
 * server answers again: an outage first noticed by a connection that is not
 * the watch's own (one of BullMQ's) still ends, logged, once it is over.
 */
export function watchDependencies(urls: { redis: string; postgres: string }, logger: Logger): WorkerDependencies {
  return {
    redis: new DependencyWatch("Redis", logger, { owns: errorsOf(urls.redis, 6379, REDIS_ERRORS), probe: () => reachRedis(urls.redis) }),
    postgres: new DependencyWatch("PostgreSQL", logger, {
      owns: errorsOf(urls.postgres, 5432, POSTGRES_ERRORS),
      probe: () => reachPostgres(urls.postgres),
    }),
  };
}
