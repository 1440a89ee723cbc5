import { describe, expect, it } from "vitest";
import { UpstreamClient, UpstreamError } from "../../src/upstream/client.ts";
import { PATHS } from "../../src/upstream/endpoints.ts";
import { everythingIn, memoryLogger, rejectionOf, sendJson, useLocalServers } from "./support.ts";

const KEY = "sk-live-safety-7f3a9c";

const local = useLocalServers();

describe("the API key", () => {
  it("is sent in the header and appears in no error and no log line, even when the upstream echoes it", async () => {
    const server = await local.serve((request, response) => {
      const key = request.headers["x-api-key"];
      if (request.url?.startsWith(PATHS.lead)) return sendJson(response, 401, { message: `unknown key ${String(key)}` });
      response.writeHead(500, { "content-type": "text/html" });
      response.end(`<h1>crash while serving ${String(key)}</h1>`);
    });
    const { logger, lines } = memoryLogger();
    const client = local.connect({ baseUrl: server.url, apiKey: KEY, requestsPerSecond: 1000, maxRetries: 1, retryBaseMs: 1, retryCapMs: 2, logger });
    const closed = new UpstreamClient({ baseUrl: "http://127.0.0.1:1", apiKey: KEY, maxRetries: 0, logger });

    const errors = [
      await rejectionOf(client.getLead("l1")),
      await rejectionOf(client.getCampaign("c1")),
      await rejectionOf(closed.listWorkspaces()),
    ];
    await closed.close();

    expect(errors.map((error) => (error as UpstreamError).status)).toEqual([401, 500, undefined]);
    expect((errors[0] as UpstreamError).upstreamMessage).toBe("unknown key [REDACTED]");
    for (const error of errors) {
      expect(error).toBeInstanceOf(UpstreamError);
      expect(everythingIn(error)).not.toContain(KEY);
    }
    expect(lines.length).toBeGreaterThanOrEqual(4);
    expect(lines.join("")).toContain('"endpoint":"/api/v1/lead/"');
    expect(lines.join("")).not.toContain(KEY);
    expect(lines.join("").toLowerCase()).not.toContain("x-api-key");
  });

  it("leaves no part of it in an error whose upstream text echoes it across the 200-character cut", async () => {
    // The key starts before the cut and ends after it: only its first part would survive a cut made before the scrub.
    const echo = (start: string) => `${start}${"x".repeat(185 - start.length)} ${KEY} was refused`;
    const server = await local.serve((request, response) => {
      if (request.url?.startsWith(PATHS.lead)) return sendJson(response, 400, { message: echo("") });
      response.writeHead(200, { "content-type": "application/json" });
      response.end(echo('{"cut": "'));
    });
    const { logger, lines } = memoryLogger();
    const client = local.connect({ baseUrl: server.url, apiKey: KEY, requestsPerSecond: 1000, maxRetries: 0, logger });

    const errors = [await rejectionOf(client.getLead("l1")), await rejectionOf(client.getCampaign("c1"))];

    const firstPart = KEY.slice(0, 8);
    for (const error of errors) {
      expect((error as UpstreamError).message).toContain("[REDACTED]");
      expect(everythingIn(error)).not.toContain(firstPart);
    }
    expect(lines.join("")).not.toContain(firstPart);
  });

  it("is replaced in every record of an answer that echoes it, as JSON escapes it and as a URL encodes it", async () => {
    const awkward = 'k3y"with\\quote/and space';
    const echoed = { note: `served for ${awkward}`, link: `https://example.com/?key=${encodeURIComponent(awkward)}` };
    const server = await local.serve((_request, response) => sendJson(response, 200, [{ id: 1, name: "placed", ...echoed }, { name: "without an id", ...echoed }]));
    const client = local.connect({ baseUrl: server.url, apiKey: awkward, requestsPerSecond: 1000 });

    const listing = await client.listWorkspaces();

    expect(listing.records.map((record) => record.value)).toMatchObject([
      { id: 1, name: "placed", note: "served for [REDACTED]", link: "https://example.com/?key=[REDACTED]" },
    ]);
    expect(listing.rejected.map((record) => record.payload)).toEqual([
      { name: "without an id", note: "served for [REDACTED]", link: "https://example.com/?key=[REDACTED]" },
    ]);
  });

  it("of a few characters is not replaced in answers, where it would rewrite ordinary text and field names", async () => {
    const workspace = { id: 1, name: "kk", note: "kept as sent" };
    const server = await local.serve((_request, response) => sendJson(response, 200, [workspace]));
    const client = local.connect({ baseUrl: server.url, apiKey: "k", requestsPerSecond: 1000 });
    expect((await client.listWorkspaces()).records.map((record) => record.value)).toMatchObject([workspace]);
  });
});

describe("cancellation and timeouts", () => {
  it("stops at once, without retrying, when the caller aborts a stalled request", async () => {
    const server = await local.serve(() => undefined);
    const client = local.connect({ baseUrl: server.url, apiKey: KEY, timeoutMs: 60_000 });
    const controller = new AbortController();
    const reason = new Error("shutting down");

    const pending = rejectionOf(client.listWorkspaces(controller.signal));
    setTimeout(() => controller.abort(reason), 50);

    expect(await pending).toBe(reason);
    expect(client.stats).toEqual({ requests: 1, retries: 0, answered: 0 });
  });

  it("stops at once when the caller aborts during a backoff", async () => {
    const server = await local.serve((_request, response) => sendJson(response, 503, { message: "busy" }));
    let retrying: () => void = () => undefined;
    const retried = new Promise<void>((resolve) => (retrying = resolve));
    const client = local.connect({ baseUrl: server.url, apiKey: KEY, retryBaseMs: 60_000, retryCapMs: 60_000, hooks: { onRetry: () => retrying() } });
    const controller = new AbortController();
    const reason = new Error("shutting down");
    const pending = rejectionOf(client.getCampaign("c1", controller.signal));
    await retried;
    controller.abort(reason);

    expect(await pending).toBe(reason);
    expect(client.stats).toMatchObject({ requests: 1, retries: 1 });
  });

  it("times out an attempt that gets no answer and retries it", async () => {
    const server = await local.serve((_request, response, index) => {
      if (index === 0) return;
      sendJson(response, 200, { message: "Campaign paused" });
    });
    const retries: (number | undefined)[] = [];
    const client = local.connect({
      baseUrl: server.url,
      apiKey: KEY,
      timeoutMs: 200,
      retryBaseMs: 1,
      retryCapMs: 2,
      hooks: { onRetry: (event) => retries.push(event.status) },
    });

    expect(await client.pauseCampaign("c1")).toBe("Campaign paused");
    expect(retries).toEqual([undefined]);
    expect(client.stats).toMatchObject({ requests: 2, retries: 1 });
  });
});

describe("concurrency", () => {
  it("keeps at most `concurrency` requests in flight over at most that many connections", async () => {
    let inFlight = 0;
    let peak = 0;
    const server = await local.serve((_request, response) => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      setTimeout(() => {
        inFlight -= 1;
        sendJson(response, 200, []);
      }, 20);
    });
    const upstream = local.connect({ baseUrl: server.url, apiKey: KEY, requestsPerSecond: 1000, concurrency: 3 });

    await Promise.all(Array.from({ length: 20 }, () => upstream.listReplies("c1")));

    expect(peak).toBe(3);
    expect(upstream.stats.requests).toBe(20);
    expect(server.connections()).toBeLessThanOrEqual(3);
  });
});

describe("close", () => {
  it("lets a request in flight finish, then refuses new ones without sending them", async () => {
    const server = await local.serve((_request, response) => setTimeout(() => sendJson(response, 200, []), 50));
    const upstream = new UpstreamClient({ baseUrl: server.url, apiKey: KEY });

    const inFlight = upstream.listReplies("c1");
    await new Promise((resolve) => setTimeout(resolve, 10));
    await upstream.close();

    expect((await inFlight).records).toEqual([]);
    const refused = await rejectionOf(upstream.listReplies("c1"));
    expect(refused).toBeInstanceOf(UpstreamError);
    expect((refused as UpstreamError).message).toMatch(/closed/);
    expect(server.requests).toHaveLength(1);
  });
});
