import { randomUUID } from "node:crypto";
import type { Redis, Result } from "ioredis";
import type { Logger } from "../logger.ts";

/**
 * The worker-side half of "a campaign never syncs twice at once" (and
 * "one discovery per account at a time"). BullMQ's deduplication keeps one job
 * per campaign in the queue, but a job whose worker stalls (event loop blocked
 * past its lock) can be handed to a second worker while the first still runs
 * it. A lease in Redis, renewed while the run lasts, closes that gap: whoever
 * does not hold it does not run, and a holder that loses it is told to stop
 * through its AbortSignal.
 */

/** What a lease covers: the account's discovery, or one campaign. */
export type LeaseScope = { kind: "discovery" } | { kind: "campaign"; campaignUid: string; rhythm: "leads" | "events" | "all" };

const RENEW_IF_HELD = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;

const RELEASE_IF_HELD = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

declare module "ioredis" {
  interface RedisCommander<Context> {
    coldsyncRenewLease(key: string, token: string, ttlMs: string): Result<number, Context>;
    coldsyncReleaseLease(key: string, token: string): Result<number, Context>;
  }
}

export interface Lease {
  /** Aborts when the lease is lost (taken over, or not renewable for a whole TTL). */
  readonly signal: AbortSignal;
  release(): Promise<void>;
}

export interface RunLeasesOptions {
  prefix: string;
  /** How long a lease outlives a holder that died without releasing it. */
  ttlMs: number;
  logger?: Logger;
}

export class RunLeases {
  readonly #redis: Redis;
  readonly #options: RunLeasesOptions;

  constructor(redis: Redis, options: RunLeasesOptions) {
    this.#redis = redis;
    this.#options = options;
    redis.defineCommand("coldsyncRenewLease", { numberOfKeys: 1, lua: RENEW_IF_HELD });
    redis.defineCommand("coldsyncReleaseLease", { numberOfKeys: 1, lua: RELEASE_IF_HELD });
  }

  #key(account: string, scope: LeaseScope): string {
    const base = `${this.#options.prefix}:lease:{${account}}`;
    return scope.kind === "discovery" ? `${base}:discovery` : `${base}:campaign:${scope.campaignUid}:${scope.rhythm}`;
  }

  /** The lease, or null while another worker holds it. */
  async acquire(account: string, scope: LeaseScope): Promise<Lease | null> {
    const key = this.#key(account, scope);
    const what = scope.kind === "discovery" ? "discovery" : `campaign ${scope.campaignUid} (${scope.rhythm})`;
    const token = randomUUID();
    const { ttlMs, logger } = this.#options;
    const taken = await this.#redis.set(key, token, "PX", ttlMs, "NX");
    if (taken !== "OK") return null;

    const lost = new AbortController();
    let renewedAt = Date.now();
    const renew = async (): Promise<void> => {
      try {
        if ((await this.#redis.coldsyncRenewLease(key, token, String(ttlMs))) === 1) renewedAt = Date.now();
        else lost.abort(new Error(`lease on ${what} was taken over`));
      } catch (error) {
        logger?.warn({ err: error, lease: what }, "could not renew a run lease");
        if (Date.now() - renewedAt >= ttlMs) lost.abort(new Error(`lease on ${what} expired`));
      }
    };
    const timer = setInterval(() => void renew(), Math.max(1, Math.floor(ttlMs / 3)));
    timer.unref();

    return {
      signal: lost.signal,
      release: async () => {
        clearInterval(timer);
        await this.#redis.coldsyncReleaseLease(key, token);
      },
    };
  }
}
