import { beforeAll, describe, expect, it } from "vitest";
import { planSchedules } from "../../src/emulator/planning.ts";
import type { CampaignRecord, LeadRecord } from "../../src/emulator/store/model.ts";
import { PATHS } from "../../src/upstream/endpoints.ts";
import * as resources from "../../src/upstream/resources.ts";
import { Api, createdCampaign, domainsOfWorkspace, sequenceCountOf, snapshotAccount, useEmulator, validUpdateData, type AccountSnapshot } from "../support/emulator.ts";

/**
 * from_time is the start and to_time the end of the daily sending window, read with skip_days in the
 * campaign's time_zone (spec 2.3): a Tokyo campaign with a 09:00–12:00 window sends between 09:00 and
 * 12:00 Tokyo time. Update campaign measures a window whose end is earlier in the day than its start
 * through midnight (22:00 to 02:00 is four hours), so schedules are planned inside that window, not
 * between the two times the other way round.
 */

const emulator = useEmulator({ apiKeys: ["a"], seed: 29 });
let api: Api;
let seed: AccountSnapshot;

beforeAll(async () => {
  api = new Api(emulator().url, "a");
  seed = await snapshotAccount(api);
});

/** The wall-clock time of day (in seconds) and the weekday of an instant in `zone`. */
function localTime(iso: string, zone: string): { seconds: number; weekday: string } {
  const format = new Intl.DateTimeFormat("en-US", { timeZone: zone, hourCycle: "h23", hour: "2-digit", minute: "2-digit", second: "2-digit", weekday: "long" });
  const parts = format.formatToParts(new Date(iso));
  const part = (type: string) => parts.find((candidate) => candidate.type === type)?.value ?? "";
  return { seconds: Number(part("hour")) * 3600 + Number(part("minute")) * 60 + Number(part("second")), weekday: part("weekday") };
}

async function plannedTimes(change: Record<string, unknown>): Promise<string[]> {
  const target = createdCampaign(seed, (sequences) => sequences >= 2);
  const data = { ...validUpdateData(sequenceCountOf(target), domainsOfWorkspace(seed, target.campaign.workspace_id)), skip_days: [], ...change };
  const answer = await api.send("PATCH", PATHS.campaign, { kind: "json", value: { campaign_uid: target.summary.uid, update_data: data } });
  expect(answer.status, answer.text.slice(0, 300)).toBe(200);
  const { records } = await api.walk(PATHS.leads, { campaign_uid: target.summary.uid }, resources.lead);
  const times = records.flatMap((lead) => lead.schedules.map((schedule) => schedule.schedule_datetime));
  expect(times.length).toBeGreaterThan(0);
  return times;
}

describe.each([
  ["22:00:00", "02:00:00", "Europe/Paris", (seconds: number) => seconds >= 22 * 3600 || seconds <= 2 * 3600],
  ["10:00:00", "08:00:00", "Europe/Paris", (seconds: number) => seconds >= 10 * 3600 || seconds <= 8 * 3600],
  ["09:00:00", "12:00:00", "Asia/Tokyo", (seconds: number) => seconds >= 9 * 3600 && seconds <= 12 * 3600],
  ["09:00:00", "12:00:00", "America/St_Johns", (seconds: number) => seconds >= 9 * 3600 && seconds <= 12 * 3600],
])("a window from %s to %s in %s", (from, to, zone, inside) => {
  it("plans every schedule of the campaign inside it, in the campaign's time zone", async () => {
    const times = await plannedTimes({ from_time: from, to_time: to, time_zone: zone });
    expect(times.filter((time) => !inside(localTime(time, zone).seconds)).slice(0, 5)).toEqual([]);
  });
});

describe("skip_days", () => {
  it("are days of the campaign's time zone: a Tokyo campaign sending only on Sundays from 00:00 to 03:00 sends on Tokyo's Sunday, UTC's Saturday", async () => {
    const skipDays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
    const times = await plannedTimes({ from_time: "00:00:00", to_time: "03:00:00", time_zone: "Asia/Tokyo", skip_days: skipDays });
    expect(times.filter((time) => localTime(time, "Asia/Tokyo").weekday !== "Sunday").slice(0, 5)).toEqual([]);
    expect(times.filter((time) => new Date(time).getUTCDay() !== 6).slice(0, 5)).toEqual([]);
  });
});

describe("a window on a night the clock changes", () => {
  /** Plans `count` one-step leads of a campaign in `zone` as if it started at `start`; answers each schedule's instant. */
  function plan(zone: string, from: string, to: string, start: string, count = 60): number[] {
    const leads = Array.from({ length: count }, (_, index) => ({ id: 997 * (index + 1), schedules: [{ status: "created", at: 0, sequence: { nextMessageDays: 0 } }] }));
    const campaign = { settings: { daily_email_limit: count, skip_days: [], from_time: from, to_time: to, time_zone: zone }, leads: { items: leads }, sendQueue: null };
    planSchedules(campaign as unknown as CampaignRecord, leads as unknown as LeadRecord[], Date.parse(start));
    return leads.map((lead) => lead.schedules[0]?.at ?? 0);
  }

  const outside = (times: number[], zone: string, inside: (seconds: number) => boolean) =>
    times.filter((time) => !inside(localTime(new Date(time).toISOString(), zone).seconds)).map((time) => new Date(time).toISOString());

  // 2026-03-08: New York springs forward at 02:00 EST -> 03:00 EDT, St. John's (-03:30) the same night; Paris on 2026-03-29.
  it.each([
    ["America/New_York", "2026-03-07T18:00:00Z"],
    ["America/St_Johns", "2026-03-07T18:00:00Z"],
    ["Europe/Paris", "2026-03-28T12:00:00Z"],
  ])("in %s, a 02:00-05:00 window on the spring-forward night plans every send inside it: a skipped time moves forward by the change", (zone, start) => {
    const times = plan(zone, "02:00:00", "05:00:00", start);
    expect(outside(times, zone, (seconds) => seconds >= 3 * 3600 && seconds <= 5 * 3600).slice(0, 5)).toEqual([]);
  });

  it("in New York, a 22:00-04:00 window through the spring-forward night plans every send inside it", () => {
    const times = plan("America/New_York", "22:00:00", "04:00:00", "2026-03-07T18:00:00Z");
    expect(outside(times, "America/New_York", (seconds) => seconds >= 22 * 3600 || seconds <= 4 * 3600).slice(0, 5)).toEqual([]);
    expect(times.filter((time) => time < Date.parse("2026-03-08T03:00:00Z") || time > Date.parse("2026-03-08T08:00:00Z"))).toEqual([]);
  });

  // 2026-11-01: New York falls back at 02:00 EDT -> 01:00 EST, so 01:00-02:00 happens twice; Paris on 2026-10-25 (03:00 -> 02:00).
  it.each([
    ["America/New_York", "01:00:00", "03:00:00", "2026-10-31T18:00:00Z", "2026-11-01"],
    ["Europe/Paris", "02:00:00", "04:00:00", "2026-10-24T12:00:00Z", "2026-10-25"],
  ])("in %s, a %s-%s window on the fall-back night plans every send inside it, on that day", (zone, from, to, start, night) => {
    const times = plan(zone, from, to, start);
    const [opens, closes] = [from, to].map((time) => Number(time.slice(0, 2)) * 3600);
    expect(outside(times, zone, (seconds) => seconds >= (opens as number) && seconds <= (closes as number)).slice(0, 5)).toEqual([]);
    const day = new Intl.DateTimeFormat("en-CA", { timeZone: zone });
    expect(new Set(times.map((time) => day.format(time)))).toEqual(new Set([night]));
  });

  it("plans the same instants every time", () => {
    for (const zone of ["America/New_York", "America/St_Johns", "Europe/Paris"]) {
      expect(plan(zone, "22:00:00", "04:00:00", "2026-03-07T18:00:00Z")).toEqual(plan(zone, "22:00:00", "04:00:00", "2026-03-07T18:00:00Z"));
    }
  });
});
