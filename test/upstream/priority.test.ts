import { describe, expect, it } from "vitest";
import { sendJson, useLocalServers } from "./support.ts";

/** A view with a higher priority jumps the queue of requests waiting for a connection (the events rhythm over a leads walk). */

const local = useLocalServers();

describe("request priority", () => {
  it("sends a higher-priority view's request before the lower-priority ones already waiting", async () => {
    const server = await local.serve((request, response) => setTimeout(() => sendJson(response, 200, []), 100));
    const client = local.connect({ baseUrl: server.url, apiKey: "k", requestsPerSecond: 1_000, concurrency: 1 });
    const walk = client.tallied();
    const events = client.tallied({ priority: 1 });
    const waiting = Array.from({ length: 5 }, (_, index) => walk.listReplies(`walk-${index}`));
    const answering = server;
    await expect.poll(() => answering.requests.length, { interval: 5 }).toBe(1);
    const urgent = events.listReplies("events");
    await Promise.all([...waiting, urgent]);
    const order = server.requests.map((line) => new URL(line.split(" ")[1] ?? "", "http://x").searchParams.get("campaign_uid"));
    // The first walk request was already on the wire; the events request goes next.
    expect(order.indexOf("events")).toBe(1);
    expect(events.stats.requests).toBe(1);
    expect(walk.stats.requests).toBe(5);
  });
});
