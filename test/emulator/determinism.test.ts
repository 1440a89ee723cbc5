import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator } from "../../src/emulator/server.ts";
import { PATHS } from "../../src/upstream/endpoints.ts";
import * as resources from "../../src/upstream/resources.ts";
import { Api, type Emulator } from "../support/emulator.ts";

/** A seed fixes the generated data: same seed, same answers; another seed, other answers. */

let twins: [Emulator, Emulator];
let other: Emulator;

beforeAll(async () => {
  const options = { apiKeys: ["a", "b"], seed: 41, scale: "small" as const };
  twins = [await startEmulator(options), await startEmulator(options)];
  other = await startEmulator({ ...options, seed: 42 });
});

afterAll(async () => {
  await Promise.all([...(twins ?? []), other].filter(Boolean).map((emulator) => emulator.close()));
});

async function campaignsOf(emulator: Emulator, key = "a") {
  const api = new Api(emulator.url, key);
  const { records } = await api.walk(PATHS.campaigns, {}, resources.campaignListItem);
  const full = await Promise.all(records.map((record) => api.ok(PATHS.campaign, { campaign_uid: record.uid }, resources.campaign)));
  return { records, full };
}

describe("determinism", () => {
  it("two emulators with the same seed serve identical campaign listings and campaigns", async () => {
    const [left, right] = await Promise.all(twins.map((emulator) => campaignsOf(emulator)));
    expect(left?.records.length).toBeGreaterThan(0);
    expect(right).toEqual(left);
  });

  it("two emulators with the same seed hold the same ground truth for every account", () => {
    for (const key of ["a", "b"]) expect(twins[1].truth(key)).toEqual(twins[0].truth(key));
  });

  it("the same seed serves the same leads", async () => {
    const uid = (await campaignsOf(twins[0])).records[0]?.uid;
    const [left, right] = await Promise.all(twins.map((emulator) => new Api(emulator.url, "a").walk(PATHS.leads, { campaign_uid: uid }, resources.lead)));
    expect(right).toEqual(left);
  });

  it("advancing both by the same step keeps them identical", async () => {
    const reports = twins.map((emulator) => emulator.advance(86_400));
    expect(reports[1]).toEqual(reports[0]);
    expect(twins[1].truth("a")).toEqual(twins[0].truth("a"));
  });

  it("a different seed serves different campaigns", async () => {
    const [mine, theirs] = await Promise.all([campaignsOf(twins[0]), campaignsOf(other)]);
    expect(theirs.full).not.toEqual(mine.full);
    expect(theirs.records.map((r) => r.name)).not.toEqual(mine.records.map((r) => r.name));
  });

  it("two accounts of one seed hold different data", async () => {
    const [a, b] = await Promise.all([campaignsOf(twins[0], "a"), campaignsOf(twins[0], "b")]);
    expect(b.records.map((r) => r.name)).not.toEqual(a.records.map((r) => r.name));
  });
});
