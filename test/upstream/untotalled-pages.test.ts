import { describe, expect, it } from "vitest";
import { UpstreamError, type UpstreamClient } from "../../src/upstream/client.ts";
import { PATHS } from "../../src/upstream/endpoints.ts";
import { rejectionOf, sendJson, useLocalServers } from "./support.ts";

/**
 * A page answer without a usable `total` (missing, null, negative, not a
 * number, beyond a 4-byte integer) or a bare array instead of the envelope: its records are read, its
 * total is null. Only an answer that holds no array of records fails.
 */

const KEY = "untotalled-test-key";
const local = useLocalServers();

function item(uid: string) {
  return { uid, name: `Campaign ${uid}`, workspace_id: 1, created_on: "2026-01-02T03:04:05Z", status: "running" };
}

function clientFor(url: string, pageSize = 100): UpstreamClient {
  return local.connect({ baseUrl: url, apiKey: KEY, requestsPerSecond: 1000, maxRetries: 2, retryBaseMs: 1, retryCapMs: 5, pageSize });
}

describe("a page without a usable total", () => {
  it.each([
    ["missing", { data: [item("c1")] }],
    ["null", { data: [item("c1")], total: null }],
    ["negative", { data: [item("c1")], total: -1 }],
    ["not a number", { data: [item("c1")], total: "many" }],
    ["a fraction", { data: [item("c1")], total: 1.5 }],
    // The checkpoint keeps a total in a 4-byte column: a larger one would fail the page's transaction.
    ["beyond a 4-byte integer", { data: [item("c1")], total: 2_147_483_648 }],
    ["beyond a 4-byte integer, as a numeric string", { data: [item("c1")], total: "3000000000" }],
    ["a fraction, as a numeric string", { data: [item("c1")], total: "7.5" }],
    ["hexadecimal text", { data: [item("c1")], total: "0x7" }],
    ["a bare array", [item("c1")]],
  ])("reads its records with the total null when it is %s, asking once", async (_name, body) => {
    const server = await local.serve((_request, response) => sendJson(response, 200, body));
    const upstream = clientFor(server.url);
    const page = await upstream.page("campaigns", { offset: 0 });
    expect(page.records.map((record) => record.value.uid)).toEqual(["c1"]);
    expect(page.total).toBeNull();
    expect(upstream.stats).toEqual({ requests: 1, retries: 0, answered: 1 });
  });

  it("reads the largest total its checkpoint column holds", async () => {
    const server = await local.serve((_request, response) => sendJson(response, 200, { data: [item("c1")], total: 2_147_483_647 }));
    expect((await clientFor(server.url).page("campaigns", { offset: 0 })).total).toBe(2_147_483_647);
  });

  it.each([" 7 ", "7.0", "7e0", "0.7e1"])("still reads a total sent as the numeric string %j", async (total) => {
    const server = await local.serve((_request, response) => sendJson(response, 200, { data: [item("c1")], total }));
    expect((await clientFor(server.url).page("campaigns", { offset: 0 })).total).toBe(7);
  });

  it("fails, after its retries, an answer that holds no array of records", async () => {
    const server = await local.serve((_request, response) => sendJson(response, 200, { items: [item("c1")], total: 1 }));
    const error = await rejectionOf(clientFor(server.url).page("campaigns", { offset: 0 }));
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).message).toContain("protocol error: expected a JSON array or a {data: array, total: integer} envelope");
    expect((error as UpstreamError).attempts).toBe(3);
  });

  it("walks with pages() past short pages to the empty one, asked once more before it ends the walk", async () => {
    const all = Array.from({ length: 5 }, (_, index) => item(`c${index}`));
    const server = await local.serve((request, response) => {
      const offset = Number(new URL(request.url ?? "/", "http://x").searchParams.get("offset"));
      // The upstream caps its pages at 2 records whatever the limit, and sends no total.
      sendJson(response, 200, all.slice(offset, offset + 2));
    });
    const seen: string[] = [];
    for await (const page of clientFor(server.url, 3).pages("campaigns", {})) seen.push(...page.records.map((record) => record.value.uid));
    expect(seen).toEqual(["c0", "c1", "c2", "c3", "c4"]);
    expect(server.requests).toEqual([0, 2, 4, 5, 5].map((offset) => `GET ${PATHS.campaigns}?limit=3&offset=${offset}`));
  });

  it("walks with pages() past an empty first page that was a glitch", async () => {
    let asked = 0;
    const server = await local.serve((_request, response) => sendJson(response, 200, (asked += 1) === 1 ? { data: [] } : { data: asked === 2 ? [item("c0")] : [] }));
    const seen: string[] = [];
    for await (const page of clientFor(server.url, 3).pages("campaigns", {})) seen.push(...page.records.map((record) => record.value.uid));
    expect(seen).toEqual(["c0"]);
  });
});
