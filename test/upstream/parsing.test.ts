import { afterEach, describe, expect, it } from "vitest";
import { InvalidRecordError, UpstreamClient, UpstreamError, type RejectedRecord } from "../../src/upstream/client.ts";
import { PATHS } from "../../src/upstream/endpoints.ts";
import { rejectionOf, sendJson, startLocalServer, type LocalServer } from "./support.ts";

const KEY = "parsing-test-key";

function campaignItem(uid: string) {
  return { uid, name: `Campaign ${uid}`, workspace_id: 1, created_on: "2026-01-02T03:04:05Z", status: "running", brand_new_field: { kept: true } };
}

let server: LocalServer | undefined;
let client: UpstreamClient | undefined;

afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

function clientFor(url: string, rejected: RejectedRecord[] = []): UpstreamClient {
  client = new UpstreamClient({
    baseUrl: url,
    apiKey: KEY,
    requestsPerSecond: 1000,
    retryBaseMs: 1,
    retryCapMs: 5,
    hooks: { onRejected: (record) => rejected.push(record) },
  });
  return client;
}

describe("tolerant parsing", () => {
  it("rejects the one invalid record of a page and accepts the rest, keeping unknown fields", async () => {
    const bad = { uid: "c2", name: 42, workspace_id: "one", created_on: "yesterday", status: "running" };
    server = await startLocalServer((_request, response) => sendJson(response, 200, { data: [campaignItem("c1"), bad, campaignItem("c3")], total: 3 }));
    const hooked: RejectedRecord[] = [];
    const page = await clientFor(server.url, hooked).page("campaigns", { offset: 0 });

    expect(page.records.map((record) => record.uid)).toEqual(["c1", "c3"]);
    expect(page.records[0]).toMatchObject({ brand_new_field: { kept: true } });
    expect(page).toMatchObject({ total: 3, offset: 0, limit: 100 });
    expect(page.rejected).toHaveLength(1);
    const [rejected] = page.rejected;
    expect(rejected?.stream).toBe("campaigns");
    expect(rejected?.payload).toEqual(bad);
    expect(rejected?.reason).toMatch(/name: .*; workspace_id: .*; created_on: /);
    expect(rejected?.reason).not.toContain("\n");
    expect(hooked).toEqual(page.rejected);
    expect(server.requests).toEqual([`GET ${PATHS.campaigns}?limit=100&offset=0`]);
  });

  it("turns a single record that fails its schema into an InvalidRecordError, without retrying", async () => {
    server = await startLocalServer((_request, response) => sendJson(response, 200, { uid: "c1", status: "sleeping" }));
    const hooked: RejectedRecord[] = [];
    const error = await rejectionOf(clientFor(server.url, hooked).getCampaign("c1"));

    expect(error).toBeInstanceOf(InvalidRecordError);
    const invalid = error as InvalidRecordError;
    expect(invalid).toMatchObject({ retryable: false, status: 200, endpoint: PATHS.campaign, method: "GET", attempts: 1 });
    expect(invalid.rejected).toMatchObject({ stream: "campaigns", payload: { uid: "c1", status: "sleeping" } });
    expect(hooked).toEqual([invalid.rejected]);
    expect(server.requests).toEqual([`GET ${PATHS.campaign}?campaign_uid=c1`]);
  });

  it("accepts workspaces as a bare array and as an envelope", async () => {
    const workspace = {
      id: 7,
      created_on: "2026-01-01T00:00:00Z",
      subscription_plan: "pro",
      name: "Main",
      credits_remaining: 5,
      next_renewal_date: null,
      billing_period: "monthly",
      time_zone: "UTC",
      total_emails_sent: 0,
      total_replies_received: 0,
    };
    server = await startLocalServer((_request, response, index) =>
      sendJson(response, 200, index === 0 ? [workspace] : { data: [workspace, { id: "x" }], total: 2 }),
    );
    const upstream = clientFor(server.url);

    const bare = await upstream.listWorkspaces();
    const enveloped = await upstream.listWorkspaces();

    expect(bare.records.map((record) => record.id)).toEqual([7]);
    expect(enveloped.records.map((record) => record.id)).toEqual([7]);
    expect(enveloped.rejected.map((record) => record.stream)).toEqual(["workspaces"]);
  });

  it("retries an envelope that is not {data, total}, and a 200 whose body is not JSON", async () => {
    const answers = [
      (response: Parameters<typeof sendJson>[0]) => sendJson(response, 200, { items: [] }),
      (response: Parameters<typeof sendJson>[0]) => sendJson(response, 200, { data: "nope", total: 1 }),
      (response: Parameters<typeof sendJson>[0]) => {
        response.writeHead(200, { "content-type": "text/html" });
        response.end("<html><body>Maintenance</body></html>");
      },
      (response: Parameters<typeof sendJson>[0]) => sendJson(response, 200, { data: [campaignItem("c1")], total: 1 }),
    ];
    server = await startLocalServer((_request, response, index) => answers[index]?.(response));
    const upstream = clientFor(server.url);

    const page = await upstream.page("campaigns", { offset: 0 });

    expect(page.records.map((record) => record.uid)).toEqual(["c1"]);
    expect(upstream.stats).toEqual({ requests: 4, retries: 3 });
  });

  it("retries a 200 whose body is cut off mid-stream", async () => {
    const full = JSON.stringify({ data: [campaignItem("c1")], total: 1 });
    server = await startLocalServer((_request, response, index) => {
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(full) });
      if (index > 0) return void response.end(full);
      response.write(full.slice(0, 20));
      setTimeout(() => response.socket?.destroy(), 20);
    });
    const upstream = clientFor(server.url);

    const page = await upstream.page("campaigns", { offset: 0 });

    expect(page.records).toHaveLength(1);
    expect(upstream.stats).toEqual({ requests: 2, retries: 1 });
  });

  it("reads an HTML error page as a short excerpt and retries a 5xx until it gives up", async () => {
    const page = `<html><head><title>502</title><style>body{}</style></head><body><h1>Bad Gateway</h1>${"<p>x</p>".repeat(200)}</body></html>`;
    server = await startLocalServer((_request, response) => {
      response.writeHead(502, { "content-type": "text/html" });
      response.end(page);
    });
    const upstream = new UpstreamClient({ baseUrl: server.url, apiKey: KEY, requestsPerSecond: 1000, maxRetries: 2, retryBaseMs: 1, retryCapMs: 5 });
    client = upstream;

    const error = await rejectionOf(upstream.getLead("l1"));

    expect(error).toBeInstanceOf(UpstreamError);
    const failure = error as UpstreamError;
    expect(failure).toMatchObject({ status: 502, retryable: true, attempts: 3, endpoint: PATHS.lead });
    expect(failure.upstreamMessage).toMatch(/^502 Bad Gateway x x/);
    expect(failure.upstreamMessage?.length).toBeLessThanOrEqual(201);
    expect(failure.upstreamMessage).not.toContain("<");
    expect(upstream.stats).toEqual({ requests: 3, retries: 2 });
  });

  it("walks pages until the offset reaches the total, one page per request", async () => {
    const all = Array.from({ length: 5 }, (_, index) => campaignItem(`c${index}`));
    server = await startLocalServer((request, response) => {
      const query = new URL(request.url ?? "/", "http://x").searchParams;
      const offset = Number(query.get("offset"));
      const limit = Number(query.get("limit"));
      sendJson(response, 200, { data: all.slice(offset, offset + limit), total: all.length });
    });
    client = new UpstreamClient({ baseUrl: server.url, apiKey: KEY, requestsPerSecond: 1000, pageSize: 2 });

    const seen: string[] = [];
    for await (const page of client.pages("campaigns", { workspaceId: 3, startOffset: 1 })) seen.push(...page.records.map((record) => record.uid));

    expect(seen).toEqual(["c1", "c2", "c3", "c4"]);
    expect(server.requests).toEqual([
      `GET ${PATHS.campaigns}?workspace_id=3&limit=2&offset=1`,
      `GET ${PATHS.campaigns}?workspace_id=3&limit=2&offset=3`,
    ]);
  });
});
