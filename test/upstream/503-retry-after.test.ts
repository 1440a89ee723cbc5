import { describe, expect, it } from "vitest";
import { sendJson, useLocalServers } from "./support.ts";

/**
 * README, configuration: COLDSYNC_MAX_RETRIES retries "network errors, 5xx, 429 ... `Retry-After` is honoured".
 * An upstream in maintenance (or a load balancer in front of it) answers 503 with Retry-After: asked again after
 * the backoff's jitter alone, every retry would be spent in well under a second and the stream would fail.
 */

const KEY = "sk-503-retry-after";
const local = useLocalServers();

describe("a 503 with Retry-After", () => {
  it("is not asked again before Retry-After has passed", async () => {
    const arrivals: number[] = [];
    const server = await local.serve((_request, response, index) => {
      arrivals.push(performance.now());
      if (index === 0) {
        response.writeHead(503, { "content-type": "application/json", "retry-after": "2" });
        response.end(JSON.stringify({ message: "down for maintenance" }));
        return;
      }
      sendJson(response, 200, []);
    });
    const client = local.connect({ baseUrl: server.url, apiKey: KEY, requestsPerSecond: 1_000, maxRetries: 3 });

    await client.listWorkspaces();

    const [first, second] = arrivals as [number, number];
    expect(second - first).toBeGreaterThanOrEqual(1_900);
  });
});
