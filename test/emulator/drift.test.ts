import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RECORD_DRIFT_KINDS, type DriftEntry, type RuntimeSettings } from "../../src/emulator/options.ts";
import { startEmulator } from "../../src/emulator/server.ts";
import { PATHS } from "../../src/upstream/endpoints.ts";
import { campaignStatus, emailContentType, replyClassification } from "../../src/upstream/enums.ts";
import { Api, type Emulator } from "../support/emulator.ts";
import { applyPlan, readAccount, valueAt, type RawAnswer } from "./drift-reading.ts";
import { instantMicros } from "./instants.ts";

/**
 * Record-level drift seen from a client: deterministic, every kind shows at `wild` and only the
 * selected ones with driftKinds, keys stay usable, containers of children stay, unknown enum values
 * agree across endpoints, the ground truth ignores it, and `none` serves exactly the clean bytes.
 */

// With this seed every endpoint shows a deviation at wild (workspaces, domains and contact lists counted over the six accounts).
const SEED = 3;
const ONLY_RECORD_KINDS = { driftKinds: [...RECORD_DRIFT_KINDS] };
const OTHER_KEYS = ["b", "c", "d", "e", "f"];

let emulator: Emulator;
let api: Api;
/** The account read with drift none, and with wild record-level drift (no page-level kinds, so answers pair up one to one). */
let clean: RawAnswer[];
let wild: RawAnswer[];

/** Runs `read` with the settings changed, then puts every setting back as it was (driftKinds absent again too). */
async function withSettings<T>(change: Partial<RuntimeSettings>, read: () => T | Promise<T>): Promise<T> {
  const settings = emulator.settings as Record<string, unknown>;
  const saved = { ...settings };
  Object.assign(settings, change);
  try {
    return await read();
  } finally {
    for (const name of Object.keys(settings)) delete settings[name];
    Object.assign(settings, saved);
  }
}

const readWith = (change: Partial<RuntimeSettings>) => withSettings(change, () => readAccount(api));

/** Every record of the clean read with its endpoint and its drifted counterpart. */
function pairs(drifted: RawAnswer[]): { path: string; clean: Record<string, unknown>; drifted: Record<string, unknown> }[] {
  expect(drifted.length).toBe(clean.length);
  return clean.flatMap((answer, index) => {
    const other = drifted[index] as RawAnswer;
    expect(other.records.length, `${answer.path} ${JSON.stringify(answer.query)}`).toBe(answer.records.length);
    return answer.records.map((record, at) => ({ path: answer.path, clean: record, drifted: other.records[at] as Record<string, unknown> }));
  });
}

/** Every clean record with its endpoint and the deviations driftOf() names for it under `change`. */
function plans(change: Partial<RuntimeSettings>): Promise<{ path: string; clean: Record<string, unknown>; plan: DriftEntry[] }[]> {
  return withSettings(change, () => clean.flatMap((answer) => answer.records.map((record) => ({ path: answer.path, clean: record, plan: emulator.driftOf(answer.path, record) }))));
}

beforeAll(async () => {
  emulator = await startEmulator({ apiKeys: ["a", ...OTHER_KEYS], seed: SEED, scale: "small" });
  api = new Api(emulator.url, "a");
  clean = await readWith({ drift: "none" });
  wild = await readWith({ drift: "wild", ...ONLY_RECORD_KINDS });
}, 60_000);

afterAll(async () => {
  await emulator?.close();
});

describe("what drift serves", () => {
  it("is the clean rendering with exactly the deviations driftOf() names", async () => {
    expect((await plans({ drift: "none" })).every((entry) => entry.plan.length === 0)).toBe(true);
    const expected = await plans({ drift: "wild", ...ONLY_RECORD_KINDS });
    let deviating = 0;
    pairs(wild).forEach((pair, index) => {
      const { plan } = expected[index] as { plan: DriftEntry[] };
      expect(pair.drifted, `${pair.path} ${JSON.stringify(pair.clean).slice(0, 120)}`).toEqual(applyPlan(pair.clean, plan));
      if (JSON.stringify(pair.drifted) !== JSON.stringify(pair.clean)) deviating += 1;
    });
    expect(deviating).toBeGreaterThan(50);
  });

  it("every record-level kind appears at wild, on every endpoint that serves records", async () => {
    const entries = await plans({ drift: "wild" });
    expect(new Set(entries.flatMap((entry) => entry.plan.map((deviation) => deviation.kind)))).toEqual(new Set(RECORD_DRIFT_KINDS));
    const endpoints = new Set(entries.filter((entry) => entry.plan.length > 0).map((entry) => entry.path));
    // Workspaces, domains and contact lists are few per account: the other accounts' count too, served for real.
    for (const key of OTHER_KEYS) {
      const other = new Api(emulator.url, key);
      for (const path of [PATHS.workspaces, PATHS.domains, PATHS.contacts]) {
        const query = path === PATHS.workspaces ? {} : { limit: 100 };
        const cleanAnswer = await withSettings({ drift: "none" }, async () => (await other.get(path, query)).json);
        const driftedAnswer = await withSettings({ drift: "wild", ...ONLY_RECORD_KINDS }, async () => (await other.get(path, query)).json);
        const records = (answer: unknown) => (Array.isArray(answer) ? answer : (answer as { data: unknown[] }).data) as Record<string, unknown>[];
        for (const [index, record] of records(cleanAnswer).entries()) {
          const plan = await withSettings({ drift: "wild", ...ONLY_RECORD_KINDS }, () => emulator.driftOf(path, record));
          expect(records(driftedAnswer)[index]).toEqual(applyPlan(record, plan));
          if (plan.length > 0) endpoints.add(path);
        }
      }
    }
    expect([...endpoints].sort()).toEqual(
      [PATHS.workspaces, PATHS.domains, PATHS.contacts, PATHS.campaigns, PATHS.campaign, PATHS.leads, PATHS.lead, PATHS.replies, PATHS.linkClickEvents, PATHS.emailOpenEvents, PATHS.emailSequence].sort(),
    );
  });

  it("nested objects deviate too: contact, schedules, email_data, nested clicks and replies, settings", async () => {
    const paths = (await plans({ drift: "wild" })).flatMap((entry) => entry.plan.map((deviation) => deviation.path.replace(/\[\d+\]/g, "[]")));
    for (const prefix of ["contact.", "schedules[].", "schedules[].email_data.", "schedules[].link_click_events[].", "schedules[].replies[].", "settings."]) {
      expect(paths.some((path) => path.startsWith(prefix) && !path.slice(prefix.length).includes(".")), prefix).toBe(true);
    }
  });

  it("only the selected kinds appear with driftKinds", async () => {
    const selected = ["numeric-string", "missing"] as const;
    const kinds = new Set((await plans({ drift: "wild", driftKinds: [...selected] })).flatMap((entry) => entry.plan.map((deviation) => deviation.kind)));
    expect([...kinds].sort()).toEqual([...selected].sort());
    const drifted = await readWith({ drift: "wild", driftKinds: [...selected] });
    for (const pair of pairs(drifted)) {
      for (const [field, value] of Object.entries(pair.drifted)) {
        if (typeof pair.clean[field] !== "object" || pair.clean[field] === null) expect([pair.clean[field], String(pair.clean[field])]).toContain(value);
      }
      expect(Object.keys(pair.drifted).every((field) => field in pair.clean)).toBe(true);
    }
  });

  it("mild deviates less than wild, about 2% against 15% of the records and nested objects, and only where wild does", async () => {
    const share = async (mode: "mild" | "wild") => {
      const entries = (await plans({ drift: mode, ...ONLY_RECORD_KINDS })).filter((entry) => entry.path !== PATHS.leads && entry.path !== PATHS.lead);
      return entries.filter((entry) => entry.plan.length > 0).length / entries.length;
    };
    const [mild, wildShare] = [await share("mild"), await share("wild")];
    // Thresholds on one hash: every object mild deviates, wild deviates too.
    const [mildPlans, wildPlans] = [await plans({ drift: "mild" }), await plans({ drift: "wild" })];
    const objects = (plan: DriftEntry[]) => new Set(plan.map((deviation) => deviation.path.replace(/[^.]+$/, "")));
    mildPlans.forEach((entry, index) => {
      const wildObjects = objects(wildPlans[index]?.plan ?? []);
      for (const object of objects(entry.plan)) expect(wildObjects.has(object), `${entry.path} ${object}`).toBe(true);
    });
    expect(mild).toBeLessThan(wildShare);
    expect(mild).toBeLessThan(0.06);
    expect(wildShare).toBeGreaterThan(0.08);
    expect(wildShare).toBeLessThan(0.25);
  });
});

describe("keys stay usable", () => {
  const KEY_PATH = /(^|\.)(id|uid|schedule_id|workspace_id|link|clicked_on|opened_on)$/;

  it("keys only change their encoding: numeric strings parse to the same integer, date-times denote the same instant", async () => {
    const entries = (await plans({ drift: "wild" })).flatMap(({ clean: record, plan }) => plan.map((entry) => ({ record, entry })));
    let keys = 0;
    for (const { record, entry } of entries) {
      const before = valueAt(record, entry.path);
      if (KEY_PATH.test(entry.path)) {
        keys += 1;
        expect(["numeric-string", "datetime-form"], entry.path).toContain(entry.kind);
      }
      if (entry.kind === "numeric-string") expect(Number(entry.value)).toBe(before);
      if (entry.kind === "datetime-form") expect(instantMicros(entry.value as string), `${String(before)} as ${String(entry.value)}`).toBe(instantMicros(before as string));
      if (entry.kind === "boolean-form") expect(["true", "false", 1, 0]).toContain(entry.value);
    }
    expect(keys).toBeGreaterThan(0);
  });

  it("every drifted record still carries its keys and its containers of children", () => {
    for (const answer of wild) {
      for (const record of answer.records) {
        switch (answer.path) {
          case PATHS.leads:
          case PATHS.lead: {
            expect(typeof record.uid).toBe("string");
            expect(record.contact).toEqual(expect.objectContaining({ id: expect.anything() }));
            expect(Array.isArray(record.schedules)).toBe(true);
            for (const schedule of record.schedules as Record<string, unknown>[]) {
              expect(schedule.id).toBeDefined();
              expect(schedule.email_data).toEqual(expect.objectContaining({ id: expect.anything() }));
              expect(Array.isArray(schedule.link_click_events)).toBe(true);
              expect(Array.isArray(schedule.replies)).toBe(true);
            }
            break;
          }
          case PATHS.campaign:
            expect(typeof record.settings).toBe("object");
            expect(record.settings).not.toBeNull();
            expect(Array.isArray((record.settings as Record<string, unknown>).sending_domains)).toBe(true);
            break;
          case PATHS.replies:
            expect(record.schedule_id).toBeDefined();
            break;
          case PATHS.linkClickEvents:
            expect([record.schedule_id, record.link, record.clicked_on].every((value) => value !== undefined && value !== null)).toBe(true);
            break;
          case PATHS.emailOpenEvents:
            expect([record.schedule_id, record.opened_on].every((value) => value !== undefined && value !== null)).toBe(true);
            break;
        }
      }
    }
  });
});

describe("unknown enum values", () => {
  /** Read twice: with every record kind, and with unknown-enum alone (which then takes the whole rate, so there are many). */
  let reads: RawAnswer[][];
  beforeAll(async () => {
    reads = [wild, await readWith({ drift: "wild", driftKinds: ["unknown-enum"] })];
  });

  const isUnknown = (known: readonly string[], value: unknown) => value !== null && value !== undefined && !(known as readonly unknown[]).includes(value);

  it("a reply's unknown classification is the same nested in its schedule and in the reply listing", () => {
    let compared = 0;
    for (const read of reads) {
      const nested = new Map<number, unknown>();
      const listed = new Map<number, unknown>();
      for (const answer of read) {
        for (const record of answer.records) {
          if (answer.path === PATHS.replies) listed.set(Number(record.id), record.reply_classification);
          if (answer.path !== PATHS.leads) continue;
          for (const schedule of record.schedules as Record<string, unknown>[]) {
            for (const reply of schedule.replies as Record<string, unknown>[]) nested.set(Number(reply.id), reply.reply_classification);
          }
        }
      }
      for (const [id, value] of [...listed, ...nested]) {
        if (!isUnknown(replyClassification.options, value)) continue;
        expect([listed.get(id), nested.get(id)], `reply ${id}`).toEqual([value, value]);
        compared += 1;
      }
    }
    expect(compared).toBeGreaterThan(0);
  });

  it("a campaign's unknown status agrees between the listing and the campaign; a sequence's content type between email_data and #9", () => {
    let compared = 0;
    for (const read of reads) {
      const byEndpoint = (path: string, key: string, field: string) =>
        new Map(read.filter((answer) => answer.path === path).flatMap((answer) => answer.records.map((record) => [String(record[key]), record[field]] as const)));
      const [listed, full] = [byEndpoint(PATHS.campaigns, "uid", "status"), byEndpoint(PATHS.campaign, "uid", "status")];
      for (const [uid, status] of [...listed, ...full]) {
        if (!isUnknown(campaignStatus.options, status)) continue;
        expect([listed.get(uid), full.get(uid)]).toEqual([status, status]);
        compared += 1;
      }
      const sequences = byEndpoint(PATHS.emailSequence, "id", "email_content_type");
      for (const answer of read.filter((candidate) => candidate.path === PATHS.leads)) {
        for (const lead of answer.records) {
          for (const schedule of lead.schedules as Record<string, unknown>[]) {
            const data = schedule.email_data as Record<string, unknown>;
            if (!isUnknown(emailContentType.options, data.email_content_type)) continue;
            expect(sequences.get(String(Number(data.id)))).toBe(data.email_content_type);
            compared += 1;
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(0);
  });
});

describe("determinism and the clean mode", () => {
  it("re-reading with nothing changed gives the same bytes", async () => {
    const again = await readWith({ drift: "wild", ...ONLY_RECORD_KINDS });
    expect(again.map((answer) => answer.text)).toEqual(wild.map((answer) => answer.text));
  });

  it("another emulator of the same seed serves the same bytes for the same requests, page-level kinds included", async () => {
    const twin = await startEmulator({ apiKeys: ["a"], seed: SEED, scale: "small", drift: "wild" });
    const first = await startEmulator({ apiKeys: ["a"], seed: SEED, scale: "small", drift: "wild" });
    try {
      const [left, right] = [await readAccount(new Api(first.url, "a")), await readAccount(new Api(twin.url, "a"))];
      expect(right.map((answer) => answer.text)).toEqual(left.map((answer) => answer.text));
      expect(left.map((answer) => answer.text)).not.toEqual(clean.map((answer) => answer.text));
    } finally {
      await Promise.all([twin.close(), first.close()]);
    }
  });

  it("with drift none again, every answer is byte for byte what an emulator that never drifted serves", async () => {
    const never = await startEmulator({ apiKeys: ["a"], seed: SEED, scale: "small" });
    try {
      const [mine, theirs] = [await readWith({ drift: "none" }), await readAccount(new Api(never.url, "a"))];
      expect(mine.map((answer) => answer.text)).toEqual(theirs.map((answer) => answer.text));
      expect(mine.map((answer) => answer.text)).toEqual(clean.map((answer) => answer.text));
    } finally {
      await never.close();
    }
  });

  it("the ground truth is the same whatever the drift", async () => {
    const none = emulator.truth("a");
    expect(await withSettings({ drift: "wild" }, () => emulator.truth("a"))).toEqual(none);
  });
});
