/**
 * A signal aborted when any of its sources is (or when its time is up),
 * whose links to the sources are cut by `dispose()`. It stands in for
 * AbortSignal.any and AbortSignal.timeout where a source lives as long as the
 * process (the worker's shutdown signal): on Node 20 every signal
 * AbortSignal.any makes stays reachable from its sources for good, so each
 * job, run and request attempt of a worker that runs for months kept a few
 * dozen bytes alive (about 50 MB a day at 10 requests a second).
 */
export class LinkedSignal {
  readonly #controller = new AbortController();
  readonly #unlinks: (() => void)[] = [];
  #timer: NodeJS.Timeout | undefined;
  #timedOut = false;

  constructor(sources: readonly (AbortSignal | undefined)[], timeoutMs?: number) {
    for (const source of sources) {
      if (source === undefined) continue;
      if (source.aborted) {
        this.#abort(source.reason);
        return;
      }
      const onAbort = () => this.#abort(source.reason);
      source.addEventListener("abort", onAbort, { once: true });
      this.#unlinks.push(() => source.removeEventListener("abort", onAbort));
    }
    if (timeoutMs !== undefined) {
      this.#timer = setTimeout(() => {
        this.#timedOut = true;
        this.#abort(new DOMException("The operation was aborted due to timeout", "TimeoutError"));
      }, timeoutMs);
      // As AbortSignal.timeout's: a pending deadline alone does not keep the process up.
      this.#timer.unref();
    }
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Whether the signal was aborted by its own deadline rather than by a source. */
  get timedOut(): boolean {
    return this.#timedOut;
  }

  /** Cuts the links to the sources and the deadline; the signal stays as it is. */
  dispose(): void {
    clearTimeout(this.#timer);
    for (const unlink of this.#unlinks.splice(0)) unlink();
  }

  #abort(reason: unknown): void {
    this.dispose();
    this.#controller.abort(reason);
  }
}
