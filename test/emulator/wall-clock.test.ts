import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { WallClock } from "../../src/emulator/clock.ts";
import { runtimeSettings } from "../../src/emulator/options.ts";
import { Api, useEmulator } from "../support/emulator.ts";
import { accountOf, seeded } from "./unit/world.ts";

/** The wall-clock mode: simulated time follows real time, at real speed, from the moment it is on. */

const BIN = fileURLToPath(new URL("../../bin/coldsync.js", import.meta.url));
const exec = promisify(execFile);

function fakeClock(scale: "small" | "busy" = "small") {
  const world = seeded(5, ["a"], scale);
  const settings = runtimeSettings.parse({});
  let real = 1_000_000;
  const clock = new WallClock(world, settings, undefined, () => real);
  return {
    world,
    settings,
    clock,
    pass: (ms: number) => {
      real += ms;
      clock.catchUp();
    },
  };
}

describe("WallClock", () => {
  it("moves nothing in manual mode, then plays exactly the real time elapsed since wall mode went on", () => {
    const { world, settings, clock, pass } = fakeClock();
    const start = world.now;
    pass(60_000);
    expect(world.now).toBe(start);
    settings.clock = "wall";
    pass(5_000); // the first catch-up only anchors the mode to real time
    expect(world.now).toBe(start);
    pass(90_000);
    expect(world.now).toBe(start + 90_000);
    pass(250);
    pass(0);
    expect(world.now).toBe(start + 90_250);
    settings.clock = "manual";
    pass(3_600_000);
    expect(world.now).toBe(start + 90_250);
    settings.clock = "wall";
    pass(1_000);
    pass(2_000);
    expect(world.now).toBe(start + 92_250); // the manual hour was not played
    clock.stop();
  });

  it("keeps sends and engagement arriving as time passes by the second (busy seed)", () => {
    const { world, settings, clock, pass } = fakeClock("busy");
    settings.clock = "wall";
    const account = accountOf(world);
    const count = () => account.campaigns.items.reduce((sum, campaign) => sum + campaign.opens.length + campaign.clicks.length + campaign.replies.length, 0);
    const sent = () => account.campaigns.items.reduce((sum, campaign) => sum + campaign.leads.items.reduce((n, lead) => n + lead.schedules.filter((s) => s.sentOn !== null).length, 0), 0);
    const [eventsBefore, sentBefore] = [count(), sent()];
    pass(0);
    for (let second = 0; second < 15 * 60; second++) pass(1_000);
    expect(world.now - Date.parse("2026-06-01T00:00:00.000Z")).toBe(15 * 60_000);
    expect(count() - eventsBefore).toBeGreaterThanOrEqual(8);
    expect(sent() - sentBefore).toBeGreaterThanOrEqual(8);
    clock.stop();
  });
});

describe("clock: wall on a running emulator", () => {
  const emulator = useEmulator({ apiKeys: ["a"], seed: 3, admin: true, clock: "wall" });
  const admin = () => new Api(emulator().url, "a");
  const simulatedNow = async () => Date.parse(((await admin().get("/admin/truth")).json as { now: string }).now);

  it("elapses at real speed, seen by the API and by truth()", async () => {
    expect(emulator().settings.clock).toBe("wall");
    expect((await admin().get("/admin/settings")).json).toMatchObject({ clock: "wall" });
    const [real, simulated] = [Date.now(), await simulatedNow()];
    await sleep(1_200);
    const elapsed = (await simulatedNow()) - simulated;
    expect(elapsed).toBeGreaterThanOrEqual(1_150);
    expect(elapsed).toBeLessThanOrEqual(Date.now() - real + 50);
    expect(Date.parse(emulator().truth("a").now)).toBeGreaterThanOrEqual(simulated + elapsed);
  });

  it("stops where it is when POST /admin/settings puts it back to manual; advance() still works", async () => {
    const answer = await admin().send("POST", "/admin/settings", { kind: "json", value: { clock: "manual" } });
    expect(answer.status).toBe(200);
    const stopped = await simulatedNow();
    await sleep(300);
    expect(await simulatedNow()).toBe(stopped);
    emulator().advance(60);
    expect(await simulatedNow()).toBe(stopped + 60_000);
    expect((await admin().send("POST", "/admin/settings", { kind: "json", value: { clock: "sideways" } })).status).toBe(400);
    expect((await admin().send("POST", "/admin/settings", { kind: "json", value: { clock: null } })).json).toMatchObject({ clock: "manual" });
  });
});

describe("coldsync emulator --clock", () => {
  it("is validated before anything starts", async () => {
    const outcome = await exec(process.execPath, [BIN, "emulator", "--port", "0", "--clock", "fast"], { timeout: 30_000 }).catch(
      (error: { code?: number; stderr?: string }) => error,
    );
    expect((outcome as { code?: number }).code).toBe(2);
    expect(String((outcome as { stderr?: string }).stderr).trim()).toMatch(/^coldsync: --clock: must be one of: manual, wall$/);
  });
});
