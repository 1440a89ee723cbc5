/**
 * A fixed one-second window per API key: at most `limit` requests in each
 * wall-clock second. Retry-After is the whole seconds until the window ends.
 */
export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  /** Counts the request; answers the seconds to wait when it is over the limit, else undefined. */
  hit(key: string, limit: number, now = Date.now()): number | undefined {
    const start = now - (now % 1_000);
    const window = this.windows.get(key);
    if (!window || window.start !== start) {
      this.windows.set(key, { start, count: 1 });
      return undefined;
    }
    if (window.count >= limit) return Math.max(1, Math.ceil((start + 1_000 - now) / 1_000));
    window.count++;
    return undefined;
  }
}
