import { beforeAll, describe, expect, it } from "vitest";
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
