import { describe, expect, it } from "vitest";
import { UpstreamClient, UpstreamError } from "../../src/upstream/client.ts";
import { PATHS } from "../../src/upstream/endpoints.ts";
import { everythingIn, memoryLogger, readableForms, rejectionOf, sendJson, useLocalServers } from "./support.ts";

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

describe("the API key in another spelling", () => {
  /** A base64-like key: it holds "/" and "+", which encoders spell in many ways. */
  const B64_KEY = "sk_live/7fQ+x9Zr2Lk";
  const leaks = (text: string) => readableForms(text).some((form) => form.includes(B64_KEY));

  /** A server that answers every request with this raw text as a 200 JSON answer. */
  const answering = (text: string) =>
    local.serve((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(text);
    });

  it("is replaced in records however a JSON encoder spells it: \\u escapes in either hex case, \\/ (PHP), JSON kept as a string", async () => {
    const spellings = {
      letter: String.raw`\u0073k_live/7fQ+x9Zr2Lk`,
      upper: String.raw`s\u006B_live/7fQ\u002Bx9Zr2Lk`,
      everything: [...B64_KEY].map((character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`).join(""),
      slash: B64_KEY.replaceAll("/", String.raw`\/`),
      nested: String.raw`{\"key\":\"\\u0073k_live\\/7fQ+x9Zr2Lk\"}`,
    };
    const fields = Object.entries(spellings).map(([name, spelled]) => `"${name}":"served for ${spelled}"`).join(",");
    const server = await answering(`[{"id":1,"name":"placed",${fields}}]`);
    const client = local.connect({ baseUrl: server.url, apiKey: B64_KEY, requestsPerSecond: 1000 });

    const [record] = (await client.listWorkspaces()).records.map((each) => each.value as Record<string, string>);

    expect(record).toMatchObject({
      name: "placed",
      letter: "served for [REDACTED]",
      upper: "served for [REDACTED]",
      everything: "served for [REDACTED]",
      slash: "served for [REDACTED]",
      nested: 'served for {"key":"[REDACTED]"}',
    });
    expect(leaks(JSON.stringify(record))).toBe(false);
  });

  it("is replaced in records percent-encoded any way: lower-case hex, '/' left as is (Python's quote), encoded twice", async () => {
    const encoded = encodeURIComponent(B64_KEY);
    const spellings = {
      lower: encoded.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()),
      python: encoded.replace(/%2F/g, "/"),
      twice: encodeURIComponent(encoded),
    };
    const server = await local.serve((_request, response) =>
      sendJson(response, 200, [{ id: 1, name: "placed", ...Object.fromEntries(Object.entries(spellings).map(([name, spelled]) => [name, `https://t.example/?key=${spelled}`])) }]),
    );
    const client = local.connect({ baseUrl: server.url, apiKey: B64_KEY, requestsPerSecond: 1000 });

    const [record] = (await client.listWorkspaces()).records.map((each) => each.value as Record<string, string>);

    expect(record).toMatchObject({ name: "placed", lower: "https://t.example/?key=[REDACTED]", python: "https://t.example/?key=[REDACTED]", twice: "https://t.example/?key=[REDACTED]" });
  });

  it("is replaced in records as HTML writes it: numeric references (decimal, hex, leading zeros), named ones, escaped twice", async () => {
    const spellings = {
      numeric: B64_KEY.replace("/", "&#x2F;").replace("+", "&#43;"),
      zeros: B64_KEY.replace("/", "&#0047;").replace("+", "&#X2b;"),
      named: B64_KEY.replace("/", "&sol;").replace("+", "&plus;"),
      twice: B64_KEY.replace("/", "&amp;#47;").replace("+", "&amp;plus;"),
    };
    const server = await local.serve((_request, response) =>
      sendJson(response, 200, [{ id: 1, name: "placed", ...Object.fromEntries(Object.entries(spellings).map(([name, spelled]) => [name, `<p>key ${spelled}</p>`])) }]),
    );
    const client = local.connect({ baseUrl: server.url, apiKey: B64_KEY, requestsPerSecond: 1000 });

    const [record] = (await client.listWorkspaces()).records.map((each) => each.value as Record<string, string>);

    expect(record).toMatchObject({ name: "placed", numeric: "<p>key [REDACTED]</p>", zeros: "<p>key [REDACTED]</p>", named: "<p>key [REDACTED]</p>", twice: "<p>key [REDACTED]</p>" });
  });

  it("is replaced without breaking the answer's JSON: never inside an escape, always after an escaped backslash", async () => {
    const key = "nk_live_2f9QzX";
    // "\nk_live..." is a newline, then other text; "\\nk_live..." is a backslash, then the key.
    const server = await answering(String.raw`[{"id":1,"name":"placed","newline":"\nk_live_2f9QzX","backslash":"\\nk_live_2f9QzX"}]`);
    const client = local.connect({ baseUrl: server.url, apiKey: key, requestsPerSecond: 1000 });

    const [record] = (await client.listWorkspaces()).records.map((each) => each.value as Record<string, string>);

    expect(record).toMatchObject({ name: "placed", newline: "\nk_live_2f9QzX", backslash: "\\[REDACTED]" });
  });

  it("is not replaced from inside the hex digits of a \\u escape: a hex key after an escaped é leaves the page JSON", async () => {
    // "café" with é as \u00e9 (JSON.stringify's ASCII output, PHP), then "c0ffee42": the key is not in the text.
    const key = "00e9c0ffee42";
    const server = await answering(String.raw`[{"id":1,"name":"caf\u00e9c0ffee42"}]`);
    const client = local.connect({ baseUrl: server.url, apiKey: key, requestsPerSecond: 1000 });

    const [record] = (await client.listWorkspaces()).records.map((each) => each.value as Record<string, unknown>);

    expect(record).toMatchObject({ id: 1, name: "caféc0ffee42" });
  });

  it("is not replaced outside the answer's strings: an all-digit key inside a number leaves the page JSON", async () => {
    const key = "12345678";
    const server = await answering(`[{"id":123456789,"name":"placed","note":"key ${key}"}]`);
    const client = local.connect({ baseUrl: server.url, apiKey: key, requestsPerSecond: 1000 });

    const [record] = (await client.listWorkspaces()).records.map((each) => each.value as Record<string, unknown>);

    expect(record).toMatchObject({ id: 123456789, name: "placed", note: "key [REDACTED]" });
  });

  it("leaves none of its JSON spellings in the error of a cut 200 answer", async () => {
    const server = await answering(String.raw`[{"id": 1, "note": "served for \u0073k_live/7fQ+x9Zr2Lk and sk_live\/7fQ+x9Zr2Lk`); // cut: not JSON
    const { logger, lines } = memoryLogger();
    const client = local.connect({ baseUrl: server.url, apiKey: B64_KEY, requestsPerSecond: 1000, maxRetries: 0, logger });

    const error = (await rejectionOf(client.listWorkspaces())) as UpstreamError;

    expect(error.message).toMatch(/not JSON.*served for \[REDACTED\] and \[REDACTED\]/);
    expect(leaks(everythingIn(error))).toBe(false);
    expect(leaks(lines.join(""))).toBe(false);
  });

  it("leaves none of its HTML spellings in the error of an HTML error page (Go's html/template writes '+' as &#43;)", async () => {
    const server = await local.serve((_request, response) => {
      response.writeHead(502, { "content-type": "text/html" });
      response.end(`<html><body><h1>Bad gateway</h1><p>refused ${B64_KEY.replace("+", "&#43;").replace("/", "&#x2F;")}, then ${B64_KEY.replace("+", "&plus;")}</p></body></html>`);
    });
    const client = local.connect({ baseUrl: server.url, apiKey: B64_KEY, requestsPerSecond: 1000, maxRetries: 0 });

    const error = (await rejectionOf(client.listWorkspaces())) as UpstreamError;

    expect(error.message).toMatch(/502: Bad gateway refused \[REDACTED\], then \[REDACTED\]/);
    expect(leaks(everythingIn(error))).toBe(false);
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
