import type { Redis } from "ioredis";

/**
 * A refused API key (401) refuses every request after it, and a real upstream
 * may lock an account after repeated authentication failures. Discovery fans
 * nothing out after one, but the events tick reads only the warehouse: it
 * would enqueue every due campaign again each COLDSYNC_EVENTS_EVERY, each job
 * asking once to be refused once more. So a refusal leaves a mark in Redis, and
 * the tick holds off while it is there. Discovery keeps asking, once per
 * COLDSYNC_DISCOVER_EVERY: the first discovery the upstream does not refuse
 * (the key was mended upstream) clears the mark, as does a worker that starts
 * (it may carry a new key). The mark holds when it was set, never the key.
 */
export class KeyRefusal {
  readonly #redis: Redis;
  readonly #key: string;

  constructor(redis: Redis, options: { prefix: string; account: string }) {
    this.#redis = redis;
    this.#key = `${options.prefix}:key-refused:{${options.account}}`;
  }

  async mark(at: Date = new Date()): Promise<void> {
    await this.#redis.set(this.#key, at.toISOString());
  }

  async clear(): Promise<void> {
    await this.#redis.del(this.#key);
  }

  /** When the key was last refused, or null when it was not since the mark was cleared. */
  async refusedAt(): Promise<Date | null> {
    const at = await this.#redis.get(this.#key);
    return at === null ? null : new Date(at);
  }
}
