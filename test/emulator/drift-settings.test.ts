import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { PATHS } from "../../src/upstream/endpoints.ts";
import * as resources from "../../src/upstream/resources.ts";
import { Api, messageOf, useEmulator } from "../support/emulator.ts";

/** drift and driftKinds as settings: startEmulator(), /admin/settings, /admin/drift and the command line flags. */

const emulator = useEmulator({ apiKeys: ["a"], seed: 3, admin: true, drift: "mild", driftKinds: ["null", "page-cap"] });
const admin = () => new Api(emulator().url);
const BIN = fileURLToPath(new URL("../../bin/coldsync.js", import.meta.url));
const exec = promisify(execFile);

describe("settings", () => {
  it("startEmulator() takes drift and driftKinds, and GET /admin/settings shows them", async () => {
    expect(emulator().settings).toMatchObject({ drift: "mild", driftKinds: ["null", "page-cap"] });
    expect((await admin().get("/admin/settings")).json).toMatchObject({ drift: "mild", driftKinds: ["null", "page-cap"] });
  });

  it("POST /admin/settings changes them, validated like the others, and null puts every kind back in play", async () => {
    const set = (value: Record<string, unknown>) => admin().send("POST", "/admin/settings", { kind: "json", value });
    expect((await set({ drift: "wild", driftKinds: ["missing"] })).status).toBe(200);
    expect(emulator().settings).toMatchObject({ drift: "wild", driftKinds: ["missing"] });
    for (const bad of [{ drift: "chaotic" }, { driftKinds: ["missing", "typo"] }, { driftKinds: "missing" }]) {
      const before = { ...emulator().settings };
      const answer = await set(bad);
      expect(answer.status).toBe(400);
      expect(messageOf(answer)).toContain(Object.keys(bad)[0]);
      expect({ ...emulator().settings }).toEqual(before);
    }
    expect((await set({ driftKinds: null })).status).toBe(200);
    expect(emulator().settings).not.toHaveProperty("driftKinds");
    expect((await set({ drift: "none" })).status).toBe(200);
  });

  it("POST /admin/drift answers what driftOf() answers", async () => {
    const campaigns = await new Api(emulator().url, "a").walk(PATHS.campaigns, {}, resources.campaignListItem);
    emulator().settings.drift = "wild";
    try {
      let deviating = 0;
      for (const record of campaigns.records) {
        const answer = await admin().send("POST", "/admin/drift", { kind: "json", value: { endpoint: PATHS.campaigns, record } });
        expect(answer.status).toBe(200);
        expect(answer.json).toEqual({ deviations: emulator().driftOf(PATHS.campaigns, record) });
        if ((answer.json as { deviations: unknown[] }).deviations.length > 0) deviating += 1;
      }
      expect(deviating).toBeGreaterThan(0);
      const unknown = await admin().send("POST", "/admin/drift", { kind: "json", value: { endpoint: "/api/v1/nothing/", record: {} } });
      expect(unknown.status).toBe(400);
      expect(messageOf(unknown)).toContain("endpoint");
    } finally {
      emulator().settings.drift = "none";
    }
  });
});

describe("coldsync emulator flags", () => {
  it("--drift and --drift-kinds are validated, one line per problem, before anything starts", async () => {
    const outcome = await exec(process.execPath, [BIN, "emulator", "--port", "0", "--drift", "chaotic", "--drift-kinds", "null,typo"], { timeout: 30_000 }).catch(
      (error: { code?: number; stderr?: string }) => error,
    );
    expect((outcome as { code?: number }).code).toBe(2);
    expect(String((outcome as { stderr?: string }).stderr).trim().split("\n")).toEqual([
      expect.stringMatching(/^coldsync: --drift: must be one of: none, mild, wild$/),
      expect.stringMatching(/^coldsync: --drift-kinds \(item 2\): must be one of: .*page-repeat, total-missing$/),
    ]);
  });
});
