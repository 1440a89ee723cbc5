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
