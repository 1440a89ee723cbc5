import { describe, expect, it } from "vitest";
import { runtimeSettings } from "../../src/emulator/options.ts";
import { PATHS } from "../../src/upstream/endpoints.ts";
import { Api, messageOf, useEmulator } from "../support/emulator.ts";

/** The admin routes serve over HTTP what startEmulator() offers in process: clock, ground truth, settings. */

const emulator = useEmulator({ apiKeys: ["a", "b"], seed: 43, admin: true });
const admin = (key?: string) => new Api(emulator().url, key);

describe("GET /admin/truth", () => {
  it("answers the ground truth of the key's account, as emulator.truth() does", async () => {
    const answer = await admin("a").get("/admin/truth");
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual(emulator().truth("a"));
    expect(emulator().truth("a").counts.campaigns).toBeGreaterThan(0);
  });

  it("answers another account's truth for another key", async () => {
    const answer = await admin("b").get("/admin/truth");
    expect(answer.json).toEqual(emulator().truth("b"));
    expect(answer.json).not.toEqual(emulator().truth("a"));
  });

  it("without a key, or with an unknown one, answers 401", async () => {
    expect((await admin().get("/admin/truth")).status).toBe(401);
    const unknown = await admin("nobody").get("/admin/truth");
    expect(unknown.status).toBe(401);
    messageOf(unknown);
  });
});

describe("/admin/settings", () => {
  it("GET answers the current runtime settings", async () => {
    const answer = await admin().get("/admin/settings");
    expect(answer.status).toBe(200);
    expect(runtimeSettings.parse(answer.json)).toEqual(runtimeSettings.parse(emulator().settings));
  });

  it("POST changes settings at runtime, and the API follows them", async () => {
    const answer = await admin().send("POST", "/admin/settings", { kind: "json", value: { workspaces: "envelope" } });
    expect(answer.status).toBe(200);
    expect(emulator().settings.workspaces).toBe("envelope");
    const workspaces = await admin("a").get(PATHS.workspaces);
    expect(workspaces.json).toMatchObject({ total: expect.any(Number), data: expect.any(Array) });
    await admin().send("POST", "/admin/settings", { kind: "json", value: { workspaces: "bare" } });
    expect(Array.isArray((await admin("a").get(PATHS.workspaces)).json)).toBe(true);
  });

  it("POST with an invalid value answers 400 naming it and changes nothing", async () => {
    const before = { ...emulator().settings };
    const answer = await admin().send("POST", "/admin/settings", { kind: "json", value: { order: "sideways" } });
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toContain("order");
    expect({ ...emulator().settings }).toEqual(before);
  });
});

describe("POST /admin/advance", () => {
  it("moves the clock by the given seconds and answers an advance report", async () => {
    const before = emulator().truth("a").now;
    const answer = await admin().send("POST", "/admin/advance", { kind: "json", value: { seconds: 3600 } });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ now: expect.any(String), created: expect.any(Object), changed: expect.any(Object) });
    expect(Date.parse((answer.json as { now: string }).now) - Date.parse(before)).toBe(3_600_000);
    expect(emulator().truth("a").now).toBe((answer.json as { now: string }).now);
  });

  it.each([{}, { seconds: -5 }, { seconds: "soon" }])("rejects %j with 400 naming seconds", async (body) => {
    const before = emulator().truth("a").now;
    const answer = await admin().send("POST", "/admin/advance", { kind: "json", value: body });
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toContain("seconds");
    expect(emulator().truth("a").now).toBe(before);
  });
});
