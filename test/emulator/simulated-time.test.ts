import { beforeAll, describe, expect, it } from "vitest";
import type { AdvanceReport, GroundTruth, TruthEntity } from "../../src/emulator/options.ts";
import { TERMINAL_CAMPAIGN_STATUSES } from "../../src/upstream/enums.ts";
import { Api, schedulesOf, snapshotAccount, truthKeysOf, useEmulator, type AccountSnapshot } from "../support/emulator.ts";

/** The simulated clock: advance() makes the account live, and the API always tells what the truth holds. */

const WEEK = 7 * 24 * 3600;
const emulator = useEmulator({ apiKeys: ["a"], seed: 37 });

let before: AccountSnapshot;
let after: AccountSnapshot;
let truthBefore: GroundTruth;
let truthAfter: GroundTruth;
let report: AdvanceReport;

beforeAll(async () => {
  const api = new Api(emulator().url, "a");
  before = await snapshotAccount(api);
  truthBefore = emulator().truth("a");
  report = emulator().advance(WEEK);
  after = await snapshotAccount(api);
  truthAfter = emulator().truth("a");
}, 30_000);

const schedules = (snapshot: AccountSnapshot) => snapshot.campaigns.flatMap((data) => schedulesOf(data.leads));
const sentCount = (snapshot: AccountSnapshot) => schedules(snapshot).filter((schedule) => schedule.sent_on !== null).length;
const statusOf = (snapshot: AccountSnapshot) => new Map(snapshot.campaigns.map((data) => [data.campaign.uid, data.campaign.status]));

describe("ground truth", () => {
  it("before advancing, every listing holds exactly the truth's keys", () => {
    expect(truthKeysOf(before)).toEqual(sortedKeys(truthBefore));
  });

  it("after advancing, every listing holds exactly the truth's keys", () => {
    expect(truthKeysOf(after)).toEqual(sortedKeys(truthAfter));
  });

  it("counts agree with keys", () => {
    for (const truth of [truthBefore, truthAfter]) for (const [entity, keys] of Object.entries(truth.keys)) expect(truth.counts[entity as TruthEntity], entity).toBe(keys.length);
  });
});

function sortedKeys(truth: GroundTruth): Record<string, string[]> {
  return Object.fromEntries(Object.entries(truth.keys).map(([entity, keys]) => [entity, [...keys].sort()]));
}

describe("advance", () => {
  it("moves the simulated clock by exactly the seconds asked", () => {
    expect(Date.parse(report.now) - Date.parse(truthBefore.now)).toBe(WEEK * 1000);
    expect(truthAfter.now).toBe(report.now);
  });

  it.each<[string, (snapshot: AccountSnapshot) => number]>([
    ["sends", sentCount],
    ["opens", (s) => s.campaigns.reduce((sum, data) => sum + data.opens.length, 0)],
    ["clicks", (s) => s.campaigns.reduce((sum, data) => sum + data.clicks.length, 0)],
    ["replies", (s) => s.campaigns.reduce((sum, data) => sum + data.replies.length, 0)],
    ["leads", (s) => s.campaigns.reduce((sum, data) => sum + data.leads.length, 0)],
  ])("brings new %s", (_label, count) => {
    expect(count(after)).toBeGreaterThan(count(before));
  });

  it("changes some campaign's status, and only along the lifecycle", () => {
    const old = statusOf(before);
    const changes = [...statusOf(after)].filter(([uid, status]) => old.get(uid) !== status).map(([uid, status]) => `${old.get(uid)}->${status}`);
    expect(changes.length).toBeGreaterThan(0);
    for (const change of changes) expect(["creating->created", "scheduled->running", "running->complete"]).toContain(change);
  });

  it("keeps every campaign of a terminal status where it was", () => {
    const now = statusOf(after);
    for (const data of before.campaigns) if (TERMINAL_CAMPAIGN_STATUSES.includes(data.campaign.status)) expect(now.get(data.campaign.uid)).toBe(data.campaign.status);
  });

  it("sends nothing for paused, cancelled, complete or failed campaigns", () => {
    const quiet = new Set(before.campaigns.filter((data) => data.campaign.status === "paused" || TERMINAL_CAMPAIGN_STATUSES.includes(data.campaign.status)).map((d) => d.campaign.uid));
    const sentIn = (snapshot: AccountSnapshot) =>
      snapshot.campaigns.filter((data) => quiet.has(data.campaign.uid)).flatMap((data) => schedulesOf(data.leads).filter((s) => s.sent_on !== null).map((s) => s.id));
    expect(quiet.size).toBeGreaterThan(0);
    expect(sentIn(after).sort()).toEqual(sentIn(before).sort());
  });

  it("keeps every record seen before (the upstream only grows here)", () => {
    const old = truthKeysOf(before);
    const now = truthKeysOf(after);
    for (const entity of ["leads", "schedules", "replies", "link_clicks", "email_opens", "campaigns"] as const) {
      const present = new Set(now[entity]);
      expect(old[entity].filter((key) => !present.has(key)), entity).toEqual([]);
    }
  });

  it("reports as created exactly the records that appeared", () => {
    for (const entity of ["replies", "link_clicks", "email_opens", "leads"] as const) {
      expect(report.created[entity] ?? 0, entity).toBe(truthAfter.counts[entity] - truthBefore.counts[entity]);
    }
  });

  it("dates new sends and events inside the advanced window", () => {
    const from = Date.parse(truthBefore.now);
    const to = Date.parse(truthAfter.now);
    const oldSent = new Set(schedules(before).filter((s) => s.sent_on !== null).map((s) => s.id));
    const newlySent = schedules(after).filter((s) => s.sent_on !== null && !oldSent.has(s.id));
    const oldReplies = new Set(before.campaigns.flatMap((d) => d.replies.map((r) => r.id)));
    const newReplies = after.campaigns.flatMap((d) => d.replies).filter((r) => !oldReplies.has(r.id));
    const oldOpens = new Set(truthKeysOf(before).email_opens);
    const newOpens = after.campaigns.flatMap((d) => d.opens).filter((o) => !oldOpens.has(`${o.schedule_id}|${o.opened_on}`));
    const dates = [...newlySent.map((s) => s.sent_on ?? ""), ...newReplies.map((r) => r.received_on), ...newOpens.map((o) => o.opened_on)].map(Date.parse);
    expect(dates.length).toBeGreaterThan(0);
    for (const at of dates) {
      expect(at).toBeGreaterThan(from);
      expect(at).toBeLessThanOrEqual(to);
    }
  });
});
