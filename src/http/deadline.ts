import { setTimeout as sleep } from "node:timers/promises";

/**
 * What `work` settles to, or a rejection once `timeoutMs` pass without it
 * ("no answer within N ms"): an HTTP answer that reads Redis or the warehouse
 * must not hang with them (a client queues commands while its server is away).
 */
export async function withDeadline<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  const timer = new AbortController();
  const deadline = sleep(timeoutMs, undefined, { signal: timer.signal }).then(() => {
    throw new Error(`no answer within ${timeoutMs} ms`);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    timer.abort();
  }
}
