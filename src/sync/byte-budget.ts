/**
 * A process-wide bound on the bytes of pages fetched but not yet written.
 * Campaigns synced side by side each hold the page being written and the
 * next one, already requested; the page size is the upstream's choice, so
 * their count alone bounds nothing. A walk asks for room before requesting a
 * page and gives the page's bytes back once it is written (or abandoned).
 * Whatever the limit, one page is always let through when nothing is held,
 * so a page larger than the limit is still read, alone.
 */

/**
 * Body text of pages held at most, in UTF-16 code units (the parsed records take a few times more). A page of
 * leads is 0.1 to 0.4 MB, so this still holds the page being written and the next one of every campaign in
 * flight; 8 MiB let the `large` benchmark's peak RSS reach 15 MB higher at the same speed.
 */
export const DEFAULT_PAGE_BYTES = 2 * 1024 * 1024;

export class ByteBudget {
  readonly #limit: number;
  #held = 0;
  readonly #waiting = new Set<() => void>();

  constructor(limit = DEFAULT_PAGE_BYTES) {
    this.#limit = limit;
  }

  get held(): number {
    return this.#held;
  }

  /** Resolves once the pages held are under the limit; rejects when `signal` aborts. */
  async room(signal?: AbortSignal): Promise<void> {
    while (this.#held > 0 && this.#held >= this.#limit) {
      signal?.throwIfAborted();
      await new Promise<void>((resolve, reject) => {
        const wake = () => {
          signal?.removeEventListener("abort", abort);
          this.#waiting.delete(wake);
          resolve();
        };
        const abort = () => {
          this.#waiting.delete(wake);
          reject(signal?.reason);
        };
        this.#waiting.add(wake);
        signal?.addEventListener("abort", abort, { once: true });
      });
    }
  }

  /** A walk's share: the pages it holds, all given back by close() however the walk ends. */
  share(): BudgetShare {
    return new BudgetShare(this);
  }

  take(bytes: number): void {
    this.#held += bytes;
  }

  release(bytes: number): void {
    this.#held -= bytes;
    for (const wake of [...this.#waiting]) wake();
  }
}

export class BudgetShare {
  readonly #budget: ByteBudget;
  readonly #pages = new Map<object, number>();
  #closed = false;

  constructor(budget: ByteBudget) {
    this.#budget = budget;
  }

  room(signal?: AbortSignal): Promise<void> {
    return this.#budget.room(signal);
  }

  /** A page arrived; a page that arrives after close() (an abandoned prefetch) is not counted. */
  hold(page: object, bytes: number): void {
    if (this.#closed || this.#pages.has(page)) return;
    this.#pages.set(page, bytes);
    this.#budget.take(bytes);
  }

  /** The page is written. */
  release(page: object): void {
    const bytes = this.#pages.get(page);
    if (bytes === undefined) return;
    this.#pages.delete(page);
    this.#budget.release(bytes);
  }

  close(): void {
    this.#closed = true;
    for (const page of [...this.#pages.keys()]) this.release(page);
  }
}
