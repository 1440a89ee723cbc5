import { describe, expect, it } from "vitest";
import { API_PREFIX, PATHS } from "../../src/upstream/endpoints.ts";
import { Api, messageOf, useEmulator } from "../support/emulator.ts";

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
