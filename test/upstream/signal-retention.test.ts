import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { LinkedSignal } from "../../src/linked-signal.ts";
import { UpstreamClient } from "../../src/upstream/client.ts";

/**
 * Memory of a worker that runs for months. Every job of `coldsync worker` runs under a signal linked to the
 * process-long shutdown signal and the job's lease (src/queue/leased-job.ts), the run under one linked to that and
 * its lock (src/sync/runs.ts underLock), and every request attempt under one linked to the run's with a deadline
 * (src/upstream/http.ts). On Node 20 a signal made by AbortSignal.any() stays reachable from its sources for good:
 * each request kept about 60 bytes alive (src/linked-signal.ts).
 */

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const DEADLINE_MS = 1_500;

async function settledHeap(): Promise<number> {
  for (let i = 0; i < 4; i += 1) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return process.memoryUsage().heapUsed;
}

describe("memory of a worker that runs for months", () => {
  // About 15 s alone (105,000 requests); three times that while the suite's other files share the two cores.
  it("does not keep anything of a finished job's requests alive", async () => {
    const server = createServer((request, response) => {
      request.resume();
      response.writeHead(200, { "content-type": "application/json" });
      response.end("[]");
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const client = new UpstreamClient({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      apiKey: "sk-signal-retention-0123456789",
      requestsPerSecond: 1_000_000,
      concurrency: 16,
      // Short enough that every request's deadline has fired before the heap is weighed, long enough that a GC pause
      // or a busy core (the suite runs two files at once) does not fail a request.
      timeoutMs: DEADLINE_MS,
      maxRetries: 0,
    });
    // The worker's shutdown signal: aborted only when the process drains (src/queue/worker.ts).
    const shutdown = new AbortController();
    const jobs = async (count: number, requestsPerJob: number) => {
      for (let job = 0; job < count; job += 1) {
        // The run's requests under the process-long signal itself (a worker's links reach it, as `sync --once`'s does).
        const run = client.tallied();
        for (let batch = 0; batch < requestsPerJob; batch += 4) {
          // COLDSYNC_HTTP_CONCURRENCY (4) requests of the run in flight at once
          await Promise.all(Array.from({ length: 4 }, () => run.listWorkspaces(shutdown.signal)));
        }
      }
    };
    try {
      await jobs(200, 25); // warm-up: connections, JIT, caches
      await new Promise((resolve) => setTimeout(resolve, DEADLINE_MS + 200)); // every AbortSignal.timeout has fired
      const before = await settledHeap();
      // The worker: 100,000 requests (under 3 hours of the default COLDSYNC_RATE_LIMIT, 10/s) under the process-long shutdown signal.
      await jobs(2_500, 40);
      await new Promise((resolve) => setTimeout(resolve, DEADLINE_MS + 200));
      const retainedMb = ((await settledHeap()) - before) / 1e6;
      // Nothing of these finished jobs is reachable any more (each kept about 60 bytes, 6 MB in all); allow noise.
      expect(retainedMb, `heap retained by 100,000 finished requests: ${retainedMb.toFixed(1)} MB`).toBeLessThan(2);
    } finally {
      await client.close();
      server.closeAllConnections();
      server.close();
    }
  }, 180_000);
});

describe("a linked signal", () => {
  it("aborts with the first source's reason, or at its deadline, and lets go of its sources when disposed", async () => {
    const source = new AbortController();
    const linked = new LinkedSignal([undefined, source.signal]);
    source.abort(new Error("shutdown"));
    expect([linked.signal.aborted, (linked.signal.reason as Error).message, linked.timedOut]).toEqual([true, "shutdown", false]);

    const late = new LinkedSignal([new AbortController().signal], 5);
    await new Promise((resolve) => late.signal.addEventListener("abort", resolve));
    expect([late.timedOut, (late.signal.reason as DOMException).name]).toEqual([true, "TimeoutError"]);

    expect(new LinkedSignal([AbortSignal.abort("gone")]).signal.reason).toBe("gone");

    const kept = new AbortController();
    const disposed = new LinkedSignal([kept.signal], 5);
    disposed.dispose();
    kept.abort();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect([disposed.signal.aborted, disposed.timedOut]).toEqual([false, false]);
  });
});
