import { beforeAll, describe, expect, it } from "vitest";
import type { TruthEntity } from "../../src/emulator/options.ts";
import { API_KEY_HEADER, PATHS } from "../../src/upstream/endpoints.ts";
import * as resources from "../../src/upstream/resources.ts";
import { Api, useEmulator, type Query } from "../support/emulator.ts";

/**
 * Fault injection seen from the client side. A bounded loop walks two pages
 * of several listings at a time and classifies every answer; each fault kind
 * must show up at least once under "hostile" and never under "none".
 */

const SLOW_MS = 300;
const MAX_REQUESTS = 1_200;
const WORKERS = 6;

const emulator = useEmulator({ apiKeys: ["a"], seed: 31 });

type Kind = "serverError" | "tooManyRequests" | "nonJsonError" | "dropped" | "slow" | "inserted";

interface Tally {
  slowMs: number;
  requests: number;
  seen: Record<Kind, number>;
  /** Truth counts of the entities whose listing grew between two page requests, read right after. */
  growth: { entity: TruthEntity; before: number; after: number }[];
}

interface Target {
  path: string;
  query: Query;
  entity: TruthEntity;
}

let targets: Target[];

beforeAll(async () => {
  const api = new Api(emulator().url, "a");
  const { records } = await api.walk(PATHS.campaigns, {}, resources.campaignListItem);
  const campaign = records.find((record) => record.status === "running") ?? records[0];
  if (!campaign) throw new Error("no campaign");
  const byUid = { campaign_uid: campaign.uid };
  targets = [
    { path: PATHS.campaigns, query: {}, entity: "campaigns" },
    { path: PATHS.domains, query: {}, entity: "domains" },
    { path: PATHS.contacts, query: {}, entity: "contact_lists" },
    { path: PATHS.leads, query: byUid, entity: "leads" },
    { path: PATHS.linkClickEvents, query: byUid, entity: "link_clicks" },
    { path: PATHS.emailOpenEvents, query: byUid, entity: "email_opens" },
  ];
});

interface Outcome {
  status?: number;
  total?: number;
}

async function observe(target: Target, offset: number, tally: Tally): Promise<Outcome> {
  const url = new URL(target.path, emulator().url);
  for (const [name, value] of Object.entries({ ...target.query, limit: 2, offset })) url.searchParams.set(name, String(value));
  tally.requests += 1;
  const started = performance.now();
  try {
    const response = await fetch(url, { headers: { [API_KEY_HEADER]: "a" } });
    const text = await response.text();
    if (performance.now() - started >= tally.slowMs) tally.seen.slow += 1;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (response.status >= 500) tally.seen.serverError += 1;
    if (response.status === 429) tally.seen.tooManyRequests += 1;
    if (response.status >= 400 && json === undefined) tally.seen.nonJsonError += 1;
    const page = resources.pageEnvelope.safeParse(json);
    return { status: response.status, total: response.status === 200 && page.success ? page.data.total : undefined };
  } catch {
    tally.seen.dropped += 1;
    return {};
  }
}

async function run(faults: "none" | "hostile", slowMs: number): Promise<Tally> {
  const settings = emulator().settings;
  Object.assign(settings, { faults, slowMs, rateLimit: 0, latencyMs: 0 });
  const stopWhenAllSeen = faults === "hostile";
  const tally: Tally = {
    slowMs,
    requests: 0,
    seen: { serverError: 0, tooManyRequests: 0, nonJsonError: 0, dropped: 0, slow: 0, inserted: 0 },
    growth: [],
  };
  const allSeen = () => Object.values(tally.seen).every((count) => count > 0);
  const budget = faults === "none" ? 120 : MAX_REQUESTS;
  const worker = async (index: number) => {
    for (let step = index; tally.requests < budget && !(stopWhenAllSeen && allSeen()); step += WORKERS) {
      const target = targets[step % targets.length] as Target;
      const before = emulator().truth("a").counts[target.entity];
      const first = await observe(target, 0, tally);
      const second = await observe(target, 2, tally);
      if (first.total !== undefined && second.total !== undefined && second.total > first.total) {
        tally.seen.inserted += 1;
        tally.growth.push({ entity: target.entity, before, after: emulator().truth("a").counts[target.entity] });
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: WORKERS }, (_, index) => worker(index)));
  } finally {
    settings.faults = "none";
  }
  return tally;
}

describe("hostile", () => {
  let tally: Tally;
  beforeAll(async () => {
    tally = await run("hostile", SLOW_MS);
  }, 30_000);

  it.each<[string, Kind]>([
    ["a 5xx answer", "serverError"],
    ["a 429 answer", "tooManyRequests"],
    ["an error body that is not JSON", "nonJsonError"],
    ["a connection dropped before the body is complete", "dropped"],
    ["an answer slower than slowMs", "slow"],
    ["records inserted between two page requests", "inserted"],
  ])("shows %s", (_label, kind) => {
    expect(tally.seen[kind], `after ${tally.requests} requests: ${JSON.stringify(tally.seen)}`).toBeGreaterThan(0);
  });

  it("records inserted between pages are in the ground truth too", () => {
    expect(tally.growth.length).toBeGreaterThan(0);
    expect(tally.growth.some(({ before, after }) => after > before)).toBe(true);
  });

  it("serves correctly again once faults are back to none", async () => {
    const answer = await new Api(emulator().url, "a").get(PATHS.campaigns);
    expect(answer.status).toBe(200);
  });
});

describe("none", () => {
  it("shows no fault of any kind", async () => {
    const tally = await run("none", 2_000);
    expect(tally.seen).toEqual({ serverError: 0, tooManyRequests: 0, nonJsonError: 0, dropped: 0, slow: 0, inserted: 0 });
  });
});

describe("latency", () => {
  it("latencyMs holds every answer at least that long", async () => {
    const api = new Api(emulator().url, "a");
    emulator().settings.latencyMs = 250;
    try {
      for (const path of [PATHS.campaigns, PATHS.workspaces, PATHS.domains]) {
        const started = performance.now();
        expect((await api.get(path)).status).toBe(200);
        expect(performance.now() - started).toBeGreaterThanOrEqual(245);
      }
    } finally {
      emulator().settings.latencyMs = 0;
    }
  });
});
