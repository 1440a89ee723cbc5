import { once } from "node:events";
import { createServer, request, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { runFullSync } from "../../src/sync/runs.ts";
import { UpstreamClient } from "../../src/upstream/client.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";

/**
 * How an answer's bytes travel (body-text.ts), through a proxy that re-encodes the emulator's answers: the JSON
 * meant is the same in every case (a declared charset other than UTF-8, bytes that are not UTF-8, a Content-Encoding).
 */

const CAMPAIGN = "cmp_http";
const scripted = useScriptedCampaigns(useTestDatabase("answer_encodings"), CAMPAIGN);

/** Re-sends an answer's JSON text as `encode` makes it, with the headers it gives. */
type Reencode = (path: string, jsonText: string) => { headers: Record<string, string>; body: Buffer } | undefined;

const proxies: Server[] = [];
const clients: UpstreamClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  for (const server of proxies.splice(0)) {
    server.closeAllConnections();
    server.close();
    await once(server, "close");
  }
});

async function reencodingProxy(target: string, reencode: Reencode): Promise<string> {
  const server = createServer((incoming, outgoing) => {
    const forwarded = request(`${target}${incoming.url ?? "/"}`, { method: incoming.method, headers: incoming.headers as IncomingHttpHeaders }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on("data", (chunk: Buffer) => chunks.push(chunk));
      answer.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const path = new URL(incoming.url ?? "/", "http://proxy").pathname;
        const changed = answer.statusCode === 200 ? reencode(path, text) : undefined;
        if (changed === undefined) {
          outgoing.writeHead(answer.statusCode ?? 502, { "content-type": "application/json" });
          outgoing.end(text);
          return;
        }
        outgoing.writeHead(200, { ...changed.headers, "content-length": String(changed.body.length) });
        outgoing.end(changed.body);
      });
    });
    incoming.pipe(forwarded);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  proxies.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function clientOf(baseUrl: string): UpstreamClient {
  const client = new UpstreamClient({ baseUrl, apiKey: "k", requestsPerSecond: 5_000, maxRetries: 1, retryBaseMs: 1, retryCapMs: 5, timeoutMs: 5_000 });
  clients.push(client);
  return client;
}

describe("bytes on the wire", () => {
  it("reads an answer in the charset its Content-Type declares (ISO-8859-1), keeping the value", async () => {
    const h = await scripted({ status: "running", leads: 1 });
    const [workspace] = h.upstream.state.workspaces;
    if (workspace) workspace.name = "Café Crème";
    const url = await reencodingProxy(h.upstream.url, (path, text) =>
      path === "/api/v1/workspaces/" ? { headers: { "content-type": "application/json; charset=iso-8859-1" }, body: Buffer.from(text, "latin1") } : undefined,
    );

    const summary = await runFullSync(h.context({ client: clientOf(url) }));

    const row = await h.warehouse.db.selectFrom("workspaces").select(["name", "_field_issues"]).executeTakeFirstOrThrow();
    // What is stored must be the upstream's value: the answer said which charset its bytes are in.
    expect({ outcome: summary.outcome, name: row.name }).toEqual({ outcome: "succeeded", name: "Café Crème" });
  });

  it("names a value whose bytes were not UTF-8 (replaced by U+FFFD), instead of altering it without a word", async () => {
    const h = await scripted({ status: "running", leads: 1 });
    const [workspace] = h.upstream.state.workspaces;
    if (workspace) workspace.name = "Café Crème";
    // A legacy upstream that writes Latin-1 bytes and declares no charset at all.
    const url = await reencodingProxy(h.upstream.url, (path, text) =>
      path === "/api/v1/workspaces/" ? { headers: { "content-type": "application/json" }, body: Buffer.from(text, "latin1") } : undefined,
    );

    const summary = await runFullSync(h.context({ client: clientOf(url) }));

    const row = await h.warehouse.db.selectFrom("workspaces").select(["name", "_field_issues"]).executeTakeFirstOrThrow();
    // Each byte that was not UTF-8 is U+FFFD in the value, and named with the byte it was.
    expect(row.name).toBe("Caf\uFFFD Cr\uFFFDme");
    expect(row._field_issues).toMatchObject({ workspaces: { name: { reason: expect.stringMatching(/not UTF-8/), raw: "Caf\\udce9 Cr\\udce8me" } } });
    expect(summary.fieldIssues).toMatchObject({ "workspaces.name": 1 });
  });

  it("places no record by a key whose bytes were not UTF-8: two such keys would become one row", async () => {
    const h = await scripted({ status: "running", leads: 2 });
    const url = await reencodingProxy(h.upstream.url, (path, text) =>
      path === "/api/v1/leads/" ? { headers: { "content-type": "application/json" }, body: Buffer.from(text.replace('"L2"', '"L\u00e92"'), "latin1") } : undefined,
    );

    const summary = await runFullSync(h.context({ client: clientOf(url) }));

    const leads = await h.warehouse.db.selectFrom("leads").select("uid").orderBy("uid").execute();
    const rejected = await h.warehouse.db.selectFrom("rejected_records").select(["stream", "reason"]).execute();
    expect({ outcome: summary.outcome, leads: leads.map((row) => row.uid) }).toEqual({ outcome: "partial", leads: ["L1"] });
    expect(rejected).toEqual([{ stream: "leads", reason: expect.stringMatching(/^uid: holds characters PostgreSQL cannot store .*not UTF-8/) }]);
  });

  it("reads a leads page sent gzip-compressed (Content-Encoding: gzip) instead of failing the stream", async () => {
    const h = await scripted({ status: "running", leads: 3, sentOn: "2026-05-01T10:00:00.000Z" });
    const url = await reencodingProxy(h.upstream.url, (path, text) =>
      path === "/api/v1/leads/" ? { headers: { "content-type": "application/json", "content-encoding": "gzip" }, body: gzipSync(text) } : undefined,
    );

    const summary = await runFullSync(h.context({ client: clientOf(url) }));

    const leads = await h.warehouse.db.selectFrom("leads").select("uid").orderBy("uid").execute();
    expect({ outcome: summary.outcome, leads: leads.map((row) => row.uid) }).toEqual({ outcome: "succeeded", leads: ["L1", "L2", "L3"] });
  });
});
