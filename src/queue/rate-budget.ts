import { setTimeout as sleep } from "node:timers/promises";
import type { Redis, Result } from "ioredis";
import type { Logger } from "../logger.ts";
import type { RequestLimiter } from "../upstream/limiter.ts";

/**
 * The account's request budget, shared by every worker process through Redis.
 * It behaves like the in-process IntervalLimiter (requests spaced evenly,
 * 1000/requestsPerSecond ms apart, no burst), but the next free slot lives in
 * one Redis key, so two processes never spend the same slot. A 429 anywhere
 * sets a pause key that every process's acquire() waits out.
 *
 * Keys are named after the account, never after the API key. The hash tag
 * keeps both keys of an account in one Redis Cluster slot for the script.
 */

const RESERVE_SLOT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local paused = redis.call('PTTL', KEYS[2])
if paused > 0 then return {0, paused} end
local interval = tonumber(ARGV[1])
local slot = math.max(tonumber(redis.call('GET', KEYS[1]) or '0'), now)
local following = slot + interval
redis.call('SET', KEYS[1], tostring(following), 'PX', math.ceil(following - now) + 1000)
return {1, math.ceil(slot - now)}
`;

/** Only ever lengthens a pause: a short Retry-After must not cut a longer one short. */
const EXTEND_PAUSE = `
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
end
return 1
`;

declare module "ioredis" {
  interface RedisCommander<Context> {
    coldsyncReserveSlot(nextSlotKey: string, pauseKey: string, intervalMs: string): Result<[number, number], Context>;
    coldsyncExtendPause(pauseKey: string, ms: string): Result<number, Context>;
  }
}

export interface RateBudgetOptions {
  /** BullMQ's prefix (COLDSYNC_QUEUE_PREFIX), so tests and deployments stay apart. */
  prefix: string;
  account: string;
  requestsPerSecond: number;
  logger?: Logger;
}

export function rateBudgetKeys(prefix: string, account: string): { nextSlot: string; pause: string } {
  const base = `${prefix}:budget:{${account}}`;
  return { nextSlot: `${base}:next`, pause: `${base}:pause` };
}

export class RedisRequestLimiter implements RequestLimiter {
  readonly #redis: Redis;
  readonly #keys: { nextSlot: string; pause: string };
  readonly #intervalMs: number;
  readonly #logger: Logger | undefined;
  /** Mirrors the shared pause locally, so this process holds back before Redis has answered. */
  #pausedUntil = 0;

  constructor(redis: Redis, options: RateBudgetOptions) {
    if (!(options.requestsPerSecond > 0)) throw new RangeError("requestsPerSecond must be positive");
    this.#redis = redis;
    this.#keys = rateBudgetKeys(options.prefix, options.account);
    this.#intervalMs = 1000 / options.requestsPerSecond;
    this.#logger = options.logger;
    redis.defineCommand("coldsyncReserveSlot", { numberOfKeys: 2, lua: RESERVE_SLOT });
    redis.defineCommand("coldsyncExtendPause", { numberOfKeys: 1, lua: EXTEND_PAUSE });
  }

  async acquire(signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const localPause = this.#pausedUntil - Date.now();
      if (localPause > 0) {
        await sleep(localPause, undefined, { signal });
        continue;
      }
      const [reserved, waitMs] = await this.#redis.coldsyncReserveSlot(this.#keys.nextSlot, this.#keys.pause, String(this.#intervalMs));
      if (reserved === 1 && waitMs <= 0) return;
      await sleep(waitMs, undefined, { signal });
      // A reserved slot is ours once its time comes, unless a 429 paused the account meanwhile.
      if (reserved === 1 && !(await this.#pausedInRedis())) return;
    }
  }

  pauseFor(ms: number): void {
    const wholeMs = Math.ceil(ms);
    if (!(wholeMs > 0)) return;
    this.#pausedUntil = Math.max(this.#pausedUntil, Date.now() + wholeMs);
    this.#redis.coldsyncExtendPause(this.#keys.pause, String(wholeMs)).catch((error: unknown) => {
      // The local pause still holds this process back; other processes find out from their own 429s.
      this.#logger?.warn({ err: error }, "could not share the rate-limit pause through Redis");
    });
  }

  async #pausedInRedis(): Promise<boolean> {
    return (await this.#redis.pttl(this.#keys.pause)) > 0;
  }
}
