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
