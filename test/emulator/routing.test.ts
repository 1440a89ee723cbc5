import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { API_KEY_HEADER, API_PREFIX, PATHS } from "../../src/upstream/endpoints.ts";
import { Api, messageOf, parseJson, useEmulator, type Answer } from "../support/emulator.ts";

/** Contract A.2: 405 for a known path with a wrong method, 404 for an unknown path; both answer {message}. */

const emulator = useEmulator({ apiKeys: ["a"], seed: 23 });
const api = () => new Api(emulator().url, "a");

const wrongMethods: [string, string, string][] = [
  ["DELETE", PATHS.campaigns, "GET"],
  ["POST", PATHS.campaigns, "GET"],
  ["PUT", PATHS.campaign, "GET"],
  ["DELETE", PATHS.campaign, "PATCH"],
  ["GET", PATHS.campaignStart, "POST"],
  ["GET", PATHS.campaignPause, "POST"],
  ["PATCH", PATHS.campaignResume, "POST"],
  ["DELETE", PATHS.campaignCancel, "POST"],
  ["PUT", PATHS.emailSequence, "GET"],
  ["PATCH", PATHS.emailSequence, "POST"],
  ["POST", PATHS.leads, "GET"],
  ["DELETE", PATHS.lead, "GET"],
  ["POST", PATHS.replies, "GET"],
  ["PUT", PATHS.linkClickEvents, "GET"],
  ["POST", PATHS.emailOpenEvents, "GET"],
  ["POST", PATHS.domains, "GET"],
  ["DELETE", PATHS.contacts, "GET"],
  ["POST", PATHS.workspaces, "GET"],
];

describe("wrong method", () => {
  it.each(wrongMethods)("%s %s answers 405 {message} and an Allow header with %s", async (method, path, allowed) => {
    const answer = await api().request(method, path, { body: method === "GET" ? undefined : { kind: "json", value: {} } });
    expect(answer.status).toBe(405);
    messageOf(answer);
    expect(answer.headers.get("allow") ?? "").toContain(allowed);
  });
});

describe("a path spelled with percent-escapes", () => {
  // RFC 3986 §6.2.2.2: an escaped unreserved character (%73 is "s", %2D is "-") is that character, and the router reads it so.
  const escaped: [string, string, string][] = [
    ["PUT", `${API_PREFIX}/campaign%73/`, "GET"],
    ["PUT", `${API_PREFIX}/email%2Dsequence/`, "GET"],
    ["GET", `${API_PREFIX}/campaign/%73tart/`, "POST"],
  ];
  it.each(escaped)("%s %s answers 405 {message} and an Allow header with %s, the method it is routed with", async (method, path, allowed) => {
    const routed = await api().request(allowed, path, { body: allowed === "GET" ? undefined : { kind: "json", value: {} } });
    expect(routed.status, routed.text).not.toBe(404);
    const answer = await api().request(method, path);
    expect(answer.status, answer.text).toBe(405);
    messageOf(answer);
    expect(answer.headers.get("allow") ?? "").toContain(allowed);
  });

  it.each(["GET", "POST"])("an escaped slash is a character, not a separator: %s answers 404", async (method) => {
    const answer = await api().request(method, `${API_PREFIX}/campaign%2Fstart/`);
    expect(answer.status, answer.text).toBe(404);
    messageOf(answer);
  });

  it.each(["GET", "PUT"])("a malformed escape answers 400 {message} to %s", async (method) => {
    const answer = await api().request(method, `${API_PREFIX}/campaign%zz/`);
    expect(answer.status, answer.text).toBe(400);
    messageOf(answer);
  });
});

describe("a query string with a malformed percent-escape (contract A.2: a bad query parameter is a 400, not an unknown id)", () => {
  // Escapes are written into the path so that the URL reaches the emulator as sent, not re-encoded.
  const malformed: [string, string, string][] = [
    [PATHS.campaign, "campaign_uid", "%E0%A4%A"],
    [PATHS.lead, "lead_uid", "%"],
    [PATHS.emailSequence, "id", "%FF"],
    [PATHS.leads, "limit", "1%ZZ"],
  ];
  it.each(malformed)("GET %s?%s=%s answers 400 naming the parameter", async (path, name, text) => {
    const answer = await api().get(`${path}?${name}=${text}`);
    expect(answer.status, answer.text).toBe(400);
    expect(messageOf(answer)).toMatch(new RegExp(`^${name}: `));
  });

  it("a malformed escape in a parameter's name answers 400", async () => {
    const answer = await api().get(`${PATHS.campaigns}?limit%ZZ=1`);
    expect(answer.status, answer.text).toBe(400);
    expect(messageOf(answer)).toContain("limit%ZZ");
  });

  it("an unknown path or method is checked first: 404 and 405", async () => {
    expect((await api().get(`${API_PREFIX}/nothing-here/?campaign_uid=%`)).status).toBe(404);
    expect((await api().request("PUT", `${PATHS.campaign}?campaign_uid=%`)).status).toBe(405);
  });

  it("the key is checked first: without one the answer is 401", async () => {
    const answer = await new Api(emulator().url).get(`${PATHS.campaign}?campaign_uid=%E0%A4%A`);
    expect(answer.status, answer.text).toBe(401);
  });

  it("well-formed escapes and + still decode, and a parameter given twice is still refused", async () => {
    const { data } = (await api().get(`${PATHS.campaigns}?limit=1`)).json as { data: { uid: string }[] };
    const uid = data[0]?.uid;
    if (uid === undefined) throw new Error("the seed has no campaign");
    const escaped = [...uid].map((character) => `%${character.charCodeAt(0).toString(16).padStart(2, "0")}`).join("");
    expect((await api().get(`${PATHS.campaign}?campaign_uid=${escaped}`)).status).toBe(200);
    const plus = await api().get(`${PATHS.campaign}?campaign_uid=no+such%20campaign`);
    expect(plus.status).toBe(404);
    expect(messageOf(plus)).toContain("no such campaign");
    const twice = await api().get(`${PATHS.campaign}?campaign_uid=${uid}&campaign_uid=${uid}`);
    expect(twice.status).toBe(400);
    expect(messageOf(twice)).toContain("campaign_uid: must be given once");
  });
});

describe("unknown path", () => {
  it.each([`${API_PREFIX}/nothing-here/`, `${API_PREFIX}/campaign/explode/`, "/api/v2/campaigns/", "/"])("GET %s answers 404 {message}", async (path) => {
    const answer = await api().get(path);
    expect(answer.status).toBe(404);
    messageOf(answer);
  });

  it("admin routes are not served unless admin is on", async () => {
    const answer = await api().get("/admin/truth");
    expect(answer.status).toBe(404);
    messageOf(answer);
  });
});

/** A request sent with node:http, so the request target goes out exactly as written (fetch would send only a path). */
function rawRequest(method: string, target: string, key?: string): Promise<Answer> {
  const url = new URL(emulator().url);
  const headers: Record<string, string> = key === undefined ? {} : { [API_KEY_HEADER]: key };
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: url.hostname, port: url.port, method, path: target, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const answerHeaders = new Headers();
        for (const [name, value] of Object.entries(response.headers)) if (typeof value === "string") answerHeaders.set(name, value);
        resolve({ status: response.statusCode ?? 0, headers: answerHeaders, text, json: parseJson(text) });
      });
    });
    outgoing.on("error", reject);
    outgoing.end();
  });
}

/** Bytes written straight to the socket: for request lines node:http refuses to send. */
function rawBytes(bytes: Buffer): Promise<{ status: number; body: string }> {
  const url = new URL(emulator().url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.write(bytes));
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({ status, body: text.slice(text.indexOf("\r\n\r\n") + 4) });
    });
  });
}

describe("the API key gate and percent-escaped paths", () => {
  // The router decodes a path with decodeURI before matching (src/emulator/README.md, "HTTP behaviour":
  // `/api/v1/campaign%73/` is the campaigns listing), so `/%61pi/v1/campaigns/` is that listing too.
  it("GET /%61pi/v1/campaigns/ without X-Api-Key answers 401 (contract A.2: missing key is 401; spec 5.1: every endpoint requires the key)", async () => {
    const answer = await new Api(emulator().url).get("/%61pi/v1/campaigns/", { limit: 1 });
    expect(answer.status, answer.text).toBe(401);
    expect(messageOf(answer)).toMatch(/X-Api-Key/);
  });

  it("GET /%61pi/v1/campaigns/ with a valid key is served like /api/v1/campaigns/, never a 500 (contract A.2: 500 only for an unexpected failure)", async () => {
    const answer = await api().get("/%61pi/v1/campaigns/", { limit: 1 });
    expect(answer.status, answer.text).toBe(200);
  });

  it("POST /%61pi/v1/campaign/start/ with a body missing campaign_uid and no key answers 401 before any body check (contract A.2 order: 401 before 400)", async () => {
    const answer = await new Api(emulator().url).send("POST", "/%61pi/v1/campaign/start/", { kind: "json", value: {} });
    expect(answer.status, answer.text).toBe(401);
  });

  it("POST /%61pi/v1/campaign/pause/ with a well-formed body and no key answers 401, not 500 (contract A.2)", async () => {
    const answer = await new Api(emulator().url).send("POST", "/%61pi/v1/campaign/pause/", { kind: "json", value: { campaign_uid: "cmp_0000000" } });
    expect(answer.status, answer.text).toBe(401);
  });
});

describe("request targets in absolute form", () => {
  // RFC 9112 §3.2.2: a server MUST accept the absolute-form in requests.
  it("GET http://host/api/v1/campaigns/ without X-Api-Key answers 401 (contract A.2), not 500", async () => {
    const answer = await rawRequest("GET", `${emulator().url}${PATHS.campaigns}?limit=1`);
    expect(answer.status, answer.text).toBe(401);
  });

  it("PUT http://host/api/v1/campaigns/ answers 405 with Allow, as PUT /api/v1/campaigns/ does", async () => {
    const answer = await rawRequest("PUT", `${emulator().url}${PATHS.campaigns}`, "a");
    expect([answer.status, answer.headers.get("allow"), messageOf(answer)]).toEqual([405, "GET, HEAD", `method PUT is not allowed on ${PATHS.campaigns}; allowed: GET, HEAD`]);
  });

  it("GET http://host/api/v1/campaigns/ with a valid key answers the listing (spec 4.2 #1), not 500", async () => {
    const answer = await rawRequest("GET", `${emulator().url}${PATHS.campaigns}?limit=1`, "a");
    expect(answer.status, answer.text).toBe(200);
  });
});

describe("methods and malformed request lines", () => {
  // Contract A.2: "path known, method not" is a 405. QUERY carries a body, and fastify refuses one without a
  // Content-Type before it looks for the route.
  it("QUERY without a Content-Type answers 405 with Allow on a known path, 404 on an unknown one", async () => {
    const known = await rawRequest("QUERY", PATHS.campaigns, "a");
    expect([known.status, known.headers.get("allow"), Object.keys((known.json ?? {}) as object)]).toEqual([405, "GET, HEAD", ["message"]]);
    const unknown = await rawRequest("QUERY", `${API_PREFIX}/nothing/`, "a");
    expect([unknown.status, messageOf(unknown)]).toEqual([404, `no such path: ${API_PREFIX}/nothing/`]);
  });

  // Contract A.2: every error body is {"message": "..."} naming the offending field; a bad query parameter is a 400.
  // Node's HTTP parser refuses such a request line before any handler, so no parameter can be named; the body is the contract's all the same.
  it("a query value sent as raw (unescaped) UTF-8 bytes answers 400 with {message} alone", async () => {
    const line = Buffer.concat([Buffer.from(`GET ${PATHS.campaigns}?limit=`), Buffer.from("１", "utf8"), Buffer.from(` HTTP/1.1\r\nHost: x\r\n${API_KEY_HEADER}: a\r\nConnection: close\r\n\r\n`)]);
    const answer = await rawBytes(line);
    expect(answer.status).toBe(400);
    const body = parseJson(answer.body) as Record<string, unknown> | undefined;
    expect(Object.keys(body ?? {})).toEqual(["message"]);
    expect(String(body?.message)).toMatch(/^request: not a well-formed HTTP request/);
  });
});
