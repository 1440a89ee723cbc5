import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { UpstreamClient } from "../../src/upstream/client.ts";
import { UpstreamError } from "../../src/upstream/errors.ts";

/** How the client reads an answer's bytes (src/upstream/body-text.ts, src/upstream/http.ts), against a raw HTTP server. */

const WORKSPACE = {
  id: 1,
  created_on: "2026-01-01T00:00:00.000Z",
  subscription_plan: "growth",
  name: "Café Crème",
  credits_remaining: 100,
  next_renewal_date: "2026-01-01T00:00:00.000Z",
  billing_period: "monthly",
  time_zone: "UTC",
  total_emails_sent: 0,
  total_replies_received: 0,
};

type Answer = { status: number; headers: Record<string, string>; body: Buffer };

const servers: Server[] = [];
const clients: UpstreamClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
    await once(server, "close");
  }
});

async function serve(answer: () => Answer): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  const server = createServer((incoming, outgoing) => {
    requests += 1;
    incoming.resume();
    const { status, headers, body } = answer();
    outgoing.writeHead(status, { ...headers, "content-length": String(body.length) });
    outgoing.end(body);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests };
}

function clientOf(baseUrl: string, maxRetries = 2): UpstreamClient {
  const client = new UpstreamClient({ baseUrl, apiKey: "k", requestsPerSecond: 5_000, maxRetries, retryBaseMs: 1, retryCapMs: 5, timeoutMs: 5_000 });
  clients.push(client);
  return client;
}

describe("answer bytes as text", () => {
  it("reads a UTF-8 answer that starts with a byte order mark", async () => {
    // Many servers (.NET, some proxies) write a UTF-8 BOM before JSON. undici's text() skipped it; Buffer#toString keeps it.
    const json = Buffer.from(JSON.stringify([WORKSPACE]), "utf8");
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const { url } = await serve(() => ({ status: 200, headers: { "content-type": "application/json; charset=utf-8" }, body: Buffer.concat([bom, json]) }));

    const listing = await clientOf(url).listWorkspaces();

    expect(listing.records.map((record) => record.value.name)).toEqual(["Café Crème"]);
  });

  it("still retries a 503 whose error body is in a Content-Encoding coldsync cannot undo (the body is only the message)", async () => {
    const { url, requests } = await serve(() => ({
      status: 503,
      headers: { "content-type": "text/html", "content-encoding": "zstd" },
      body: Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58, 0x01, 0x00, 0x00]),
    }));

    const error = await clientOf(url, 2)
      .listWorkspaces()
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );

    expect(error).toBeInstanceOf(UpstreamError);
    // A 503 is retryable whatever its body says: asked 3 times (1 + 2 retries), and the job retries.
    expect({ status: (error as UpstreamError).status, retryable: (error as UpstreamError).retryable, requests: requests() }).toEqual({
      status: 503,
      retryable: true,
      requests: 3,
    });
  });

  it("keeps the Retry-After of a 429 whose error body cannot be decoded", async () => {
    const { url } = await serve(() => ({
      status: 429,
      headers: { "content-type": "text/plain", "content-encoding": "gzip", "retry-after": "7" },
      // A proxy's error page labelled gzip but cut short.
      body: Buffer.from([0x1f, 0x8b, 0x08, 0x00]),
    }));

    const error = (await clientOf(url, 0)
      .listWorkspaces()
      .catch((caught: unknown) => caught)) as UpstreamError;

    expect({ status: error.status, retryAfterMs: error.retryAfterMs }).toEqual({ status: 429, retryAfterMs: 7000 });
  });

  it("reads UTF-8 bytes as UTF-8 when the Content-Type mislabels them ISO-8859-1", async () => {
    // RFC 8259 §11: application/json defines no charset parameter and "adding one really has no effect on compliant
    // recipients". Servlet containers label JSON charset=ISO-8859-1 by default while writing UTF-8 bytes.
    const json = Buffer.from(JSON.stringify([WORKSPACE]), "utf8");
    const { url } = await serve(() => ({ status: 200, headers: { "content-type": "application/json;charset=ISO-8859-1" }, body: json }));

    const listing = await clientOf(url).listWorkspaces();

    const [record] = listing.records;
    expect({ name: record?.value.name, issues: record?.issues.length ?? 0 }).toEqual({ name: "Café Crème", issues: 0 });
  });

  it("asks once for an answer that decompresses past its limit: a bomb would be as large again", async () => {
    const bomb = gzipSync(Buffer.alloc(65 * 1024 * 1024));
    const { url, requests } = await serve(() => ({ status: 200, headers: { "content-type": "application/json", "content-encoding": "gzip" }, body: bomb }));

    const error = (await clientOf(url, 2)
      .listWorkspaces()
      .catch((caught: unknown) => caught)) as UpstreamError;

    expect({ message: error.message, retryable: error.retryable, requests: requests() }).toEqual({
      message: expect.stringMatching(/a body that cannot be decoded: an answer that decompresses to more than 67108864 bytes/),
      retryable: false,
      requests: 1,
    });
  });

  it("does not retry a request undici refuses to send (a key no header can carry)", async () => {
    const { url, requests } = await serve(() => ({ status: 200, headers: { "content-type": "application/json" }, body: Buffer.from("[]") }));
    const client = new UpstreamClient({ baseUrl: url, apiKey: "ключ-0123456789", requestsPerSecond: 5_000, maxRetries: 2, retryBaseMs: 1, retryCapMs: 5, timeoutMs: 5_000 });
    clients.push(client);

    const error = (await client.listWorkspaces().catch((caught: unknown) => caught)) as UpstreamError;

    expect({ message: error.message, retryable: error.retryable, requests: requests(), attempts: client.stats.requests }).toEqual({
      message: expect.stringMatching(/network error UND_ERR_INVALID_ARG/),
      retryable: false,
      requests: 0,
      attempts: 1,
    });
  });
});
