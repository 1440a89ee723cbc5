import { setTimeout as sleep } from "node:timers/promises";

/**
 * A read too heavy to repeat on every refresh (the funnel and the field-issue
 * counts scan every schedule: about 3 s each on a warehouse of 600,000
 * schedules), kept for `maxAgeMs` and refreshed in the background: callers
 * get the last value at once, however old, while the next one is read.
 * Callers wait for the first value at most `firstWaitMs` after the first
 * call, then hear that it is still being read, so the first page load stays
 * quick on a large warehouse too.
 */

export type Section<T> =
  | { ok: true; value: T; /** When the value was read, for sections that are not read on every refresh. */ readAt?: Date }
  | { ok: false; error: string; /** Not an error yet: the first read is still running. */ pending?: boolean };

export class PeriodicRead<T> {
  #latest: { section: Section<T>; at: number } | undefined;
  #pending: Promise<void> | undefined;
  /** Until when callers wait for the first value; later callers hear "still reading" at once. */
  #firstDeadline: number | undefined;

  constructor(
    private readonly read: () => Promise<Section<T>>,
    private readonly maxAgeMs: number,
    private readonly firstWaitMs: number,
  ) {}

  async get(): Promise<Section<T>> {
    if (!this.#latest || Date.now() - this.#latest.at >= this.maxAgeMs) this.#refresh();
    this.#firstDeadline ??= Date.now() + this.firstWaitMs;
    const wait = this.#firstDeadline - Date.now();
    if (!this.#latest && wait > 0) {
      const timer = new AbortController();
      await Promise.race([this.#pending, sleep(wait, undefined, { signal: timer.signal }).catch(() => undefined)]);
      timer.abort();
    }
    return this.#latest?.section ?? { ok: false, pending: true, error: "still reading (the first read of a large warehouse takes a few seconds)" };
  }

  #refresh(): void {
    if (this.#pending) return;
    const startedAt = new Date();
    this.#pending = this.read()
      .then((section) => {
        this.#latest = { section: section.ok ? { ...section, readAt: startedAt } : section, at: Date.now() };
      })
      .finally(() => {
        this.#pending = undefined;
      });
  }
}
