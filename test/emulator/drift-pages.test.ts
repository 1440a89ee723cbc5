import { beforeAll, describe, expect, it } from "vitest";
import type { PageDriftKind } from "../../src/emulator/options.ts";
import { PATHS } from "../../src/upstream/endpoints.ts";
import * as resources from "../../src/upstream/resources.ts";
import { Api, openKey, useEmulator, type Query } from "../support/emulator.ts";

/**
 * Page-level drift on the paginated listings: a page capped below its limit while records remain,
 * a total off by a few on one answer, a page that starts one record early. Each is drawn per request,
 * so the test asks one page repeatedly and compares each answer with the clean one.
 */

const emulator = useEmulator({ apiKeys: ["a"], seed: 12 });
const ATTEMPTS = 120;
let api: Api;
let opensOf: Query;
let total: number;
/** The clean listing: the key of every open event, in asc order. */
let keys: string[];

const keyOf = (record: unknown) => openKey(record as resources.EmailOpenEvent);

beforeAll(async () => {
  api = new Api(emulator().url, "a");
  const campaigns = await api.walk(PATHS.campaigns, {}, resources.campaignListItem);
  let best: { uid: string; total: number } | undefined;
  for (const campaign of campaigns.records) {
    const { total: opens } = await api.page(PATHS.emailOpenEvents, { campaign_uid: campaign.uid, limit: 1 });
    if (!best || opens > best.total) best = { uid: campaign.uid, total: opens };
  }
  if (!best || best.total < 40) throw new Error("the seed has no campaign with 40 opens or more");
  opensOf = { campaign_uid: best.uid };
  const all = await api.walk(PATHS.emailOpenEvents, opensOf, resources.emailOpenEvent);
  total = all.total;
  keys = all.records.map(keyOf);
});

interface Served {
  keys: string[];
  total: number;
}

async function askPage(offset: number, limit: number): Promise<Served> {
  const page = await api.page(PATHS.emailOpenEvents, { ...opensOf, offset, limit });
  return { keys: page.data.map(keyOf), total: page.total };
}

/** The same page asked `ATTEMPTS` times with only `kind` in play. */
async function askRepeatedly(kind: PageDriftKind, offset: number, limit: number): Promise<Served[]> {
  Object.assign(emulator().settings, { drift: "wild", driftKinds: [kind] });
  try {
    const answers: Served[] = [];
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) answers.push(await askPage(offset, limit));
    return answers;
  } finally {
    emulator().settings.drift = "none";
    delete emulator().settings.driftKinds;
  }
}

const clean = (offset: number, limit: number) => keys.slice(offset, offset + limit);

describe("page-cap", () => {
  it("sometimes serves fewer records than the limit although more remain, the clean page's first ones, with the right total", async () => {
    const answers = await askRepeatedly("page-cap", 0, 30);
    const capped = answers.filter((answer) => answer.keys.length < 30);
    expect(capped.length).toBeGreaterThan(0);
    expect(capped.length).toBeLessThan(ATTEMPTS / 2);
    for (const answer of capped) {
      expect(answer.keys.length).toBeGreaterThan(0);
      expect(answer.keys.length).toBeLessThan(total);
      expect(answer.keys).toEqual(clean(0, answer.keys.length));
      expect(answer.total).toBe(total);
    }
    for (const answer of answers.filter((candidate) => candidate.keys.length === 30)) expect(answer.keys).toEqual(clean(0, 30));
  });

  it("never caps the last page below what remains", async () => {
    const offset = total - 5;
    for (const answer of await askRepeatedly("page-cap", offset, 30)) expect(answer.keys).toEqual(clean(offset, 30));
  });
});

describe("page-repeat", () => {
  it("sometimes starts one record early: its first record is the last of the page before, and it holds `limit` records", async () => {
    const answers = await askRepeatedly("page-repeat", 10, 10);
    const repeated = answers.filter((answer) => answer.keys[0] !== clean(10, 10)[0]);
    expect(repeated.length).toBeGreaterThan(0);
    expect(repeated.length).toBeLessThan(ATTEMPTS / 2);
    for (const answer of repeated) {
      expect(answer.keys[0]).toBe(clean(0, 10).at(-1));
      expect(answer.keys).toEqual(clean(9, 10));
      expect(answer.total).toBe(total);
    }
  });

  it("never happens on the first page", async () => {
    for (const answer of await askRepeatedly("page-repeat", 0, 10)) expect(answer.keys).toEqual(clean(0, 10));
  });
});

describe("total-off", () => {
  it("sometimes announces a total off by 1 to 3 on that one answer, with the clean records", async () => {
    const answers = await askRepeatedly("total-off", 5, 10);
    const off = answers.filter((answer) => answer.total !== total);
    expect(off.length).toBeGreaterThan(0);
    expect(off.length).toBeLessThan(ATTEMPTS / 2);
    for (const answer of off) expect([1, 2, 3]).toContain(Math.abs(answer.total - total));
    for (const answer of answers) expect(answer.keys).toEqual(clean(5, 10));
  });
});

describe("total-missing", () => {
  it("sometimes answers the clean records with no usable total: left out, null, or a bare array", async () => {
    Object.assign(emulator().settings, { drift: "wild", driftKinds: ["total-missing"] });
    const forms = new Set<string>();
    try {
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        const { json } = await api.get(PATHS.emailOpenEvents, { ...opensOf, offset: 5, limit: 10 });
        const body = json as { data?: unknown[]; total?: unknown } | unknown[];
        const records = Array.isArray(body) ? body : (body.data ?? []);
        expect(records.map(keyOf)).toEqual(clean(5, 10));
        forms.add(Array.isArray(body) ? "bare" : !("total" in body) ? "left out" : body.total === null ? "null" : "clean");
      }
    } finally {
      emulator().settings.drift = "none";
      delete emulator().settings.driftKinds;
    }
    expect(forms).toEqual(new Set(["clean", "left out", "null", "bare"]));
  });
});

describe("rates", () => {
  it("mild deviates fewer pages than wild", async () => {
    const deviating = async (mode: "mild" | "wild") => {
      Object.assign(emulator().settings, { drift: mode, driftKinds: ["page-cap", "total-off", "page-repeat"] });
      let count = 0;
      try {
        for (let attempt = 0; attempt < 400; attempt++) {
          const page = await askPage(10, 30);
          if (page.total !== total || JSON.stringify(page.keys) !== JSON.stringify(clean(10, 30))) count += 1;
        }
      } finally {
        emulator().settings.drift = "none";
        delete emulator().settings.driftKinds;
      }
      return count / 400;
    };
    const [mild, wild] = [await deviating("mild"), await deviating("wild")];
    expect(mild).toBeLessThan(wild);
    expect(mild).toBeLessThan(0.08);
    expect(wild).toBeGreaterThan(0.08);
    expect(wild).toBeLessThan(0.25);
  });
});
