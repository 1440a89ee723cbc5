import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createMetrics, METRIC_NAMES } from "../../src/http/metrics.ts";
import { UpstreamClient, type UpstreamClientOptions } from "../../src/upstream/client.ts";
import { useEmulator } from "../support/emulator.ts";
import { everythingIn, rejectionOf } from "./support.ts";

/** The client under the emulator's per-key rate limit and added latency. */

const KEY = "client-limits-8c04aa";
/** The emulator counts requests per key in fixed wall-clock seconds; a key of its own keeps the burst's windows clean. */
const BURST_KEY = "client-limits-burst-19fe02";
const emulator = useEmulator({ apiKeys: [KEY, BURST_KEY], seed: 47, admin: true });
const clients: UpstreamClient[] = [];

function clientWith(options: Partial<UpstreamClientOptions>): UpstreamClient {
  const client = new UpstreamClient({ baseUrl: emulator().url, apiKey: KEY, requestsPerSecond: 1_000, retryBaseMs: 5, retryCapMs: 50, ...options });
  clients.push(client);
  return client;
}

afterEach(() => {
  Object.assign(emulator().settings, { rateLimit: 0, latencyMs: 0 });
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
});

describe("rate limiting", () => {
  it("waits out a 429's Retry-After before sending anything else", async () => {
    emulator().settings.rateLimit = 1;
    const responses: { status: number; at: number; durationMs: number }[] = [];
    const client = clientWith({
      retryBaseMs: 1,
      retryCapMs: 2,
      hooks: { onResponse: (event) => responses.push({ status: event.status, at: performance.now(), durationMs: event.durationMs }) },
    });

    // Three in a row within a fraction of a second: at least one exceeds 1 request per second.
    for (let call = 0; call < 3; call++) await client.listWorkspaces();

    const firstLimited = responses.find((response) => response.status === 429);
    if (!firstLimited) throw new Error("the upstream never answered 429");
    const sentAfterIt = responses.map((response) => response.at - response.durationMs).filter((sentAt) => sentAt > firstLimited.at);
    expect(sentAfterIt.length).toBeGreaterThan(0);
    for (const sentAt of sentAfterIt) expect(sentAt - firstLimited.at).toBeGreaterThanOrEqual(950);
    expect(responses.filter((response) => response.status === 200)).toHaveLength(3);
  });

  it("keeps a burst under requestsPerSecond, so the upstream's limit is never hit", async () => {
    // One request per second of headroom: the emulator stamps arrival, which jitters when the test process is busy.
    emulator().settings.rateLimit = 5;
    const sent: number[] = [];
    const statuses: number[] = [];
    const client = clientWith({
      apiKey: BURST_KEY,
      requestsPerSecond: 4,
      concurrency: 8,
      hooks: {
        onResponse: (event) => {
          statuses.push(event.status);
          sent.push(performance.now() - event.durationMs);
        },
      },
    });

    await Promise.all(Array.from({ length: 12 }, () => client.page("domains", { offset: 0, limit: 1 })));

    expect(statuses).toEqual(Array(12).fill(200));
    // Send times are reconstructed from the response hook (now - duration), which jitters by a few milliseconds:
    // requests spaced 250 ms apart put at most 4 into any window shorter than a second by more than that jitter.
    const busiestSecond = Math.max(...sent.map((start) => sent.filter((at) => at >= start && at < start + 950).length));
    expect(busiestSecond).toBeLessThanOrEqual(4);
  });
});

describe("stalled answers", () => {
  it("times out an answer slower than timeoutMs and retries it", async () => {
    emulator().settings.latencyMs = 2_000;
    const retried: (number | undefined)[] = [];
    const client = clientWith({
      timeoutMs: 300,
      hooks: {
        onRetry: (event) => {
          retried.push(event.status);
          emulator().settings.latencyMs = 0;
        },
      },
    });

    const { records } = await client.listWorkspaces();

    expect(records.length).toBeGreaterThan(0);
    expect(retried).toEqual([undefined]);
    expect(client.stats).toMatchObject({ requests: 2, retries: 1 });
  });

  it("counts in the metrics every attempt the run's tally counts, the one that timed out as status none", async () => {
    emulator().settings.latencyMs = 2_000;
    const metrics = createMetrics();
    const client = clientWith({
      timeoutMs: 300,
      hooks: {
        ...metrics.clientHooks,
        onRetry: (event) => {
          metrics.clientHooks.onRetry?.(event);
          emulator().settings.latencyMs = 0;
        },
      },
    });

    await client.listWorkspaces();

    const counted = async (name: string) => (await metrics.registry.getSingleMetric(name)?.get())?.values.map(({ labels, value }) => [labels.status, value]);
    expect(await counted(METRIC_NAMES.upstreamRequests)).toEqual([
      ["none", 1],
      ["200", 1],
    ]);
    expect(await counted(METRIC_NAMES.upstreamRetries)).toEqual([["none", 1]]);
    expect(client.stats).toMatchObject({ requests: 2, retries: 1 });
  });

  it("gives up after maxRetries with a retryable error that carries the attempts", async () => {
    emulator().settings.latencyMs = 1_000;
    const client = clientWith({ timeoutMs: 100, maxRetries: 2 });

    const error = await rejectionOf(client.getCampaign("whatever"));

    expect(error).toMatchObject({ name: "UpstreamError", retryable: true, attempts: 3, status: undefined });
    expect(everythingIn(error)).not.toContain(KEY);
  });
});
