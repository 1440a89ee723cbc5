import { beforeAll, describe, expect, it } from "vitest";
import { PATHS } from "../../src/upstream/endpoints.ts";
import * as resources from "../../src/upstream/resources.ts";
import { Api, createdCampaign, domainsOfWorkspace, sequenceCountOf, snapshotAccount, useEmulator, validUpdateData, type AccountSnapshot } from "../support/emulator.ts";

/**
 * from_time is the start and to_time the end of the daily sending window (spec 2.3); update campaign
 * measures a window whose end is earlier in the day than its start through midnight (22:00 to 02:00 is
 * four hours), so schedules are planned inside that window, not between the two times the other way round.
 */

const emulator = useEmulator({ apiKeys: ["a"], seed: 29 });
let api: Api;
let seed: AccountSnapshot;

beforeAll(async () => {
  api = new Api(emulator().url, "a");
  seed = await snapshotAccount(api);
});

const secondsOfDay = (iso: string): number => {
  const at = new Date(iso);
  return at.getUTCHours() * 3600 + at.getUTCMinutes() * 60 + at.getUTCSeconds();
};

describe.each([
  ["22:00:00", "02:00:00", (seconds: number) => seconds >= 22 * 3600 || seconds <= 2 * 3600],
  ["10:00:00", "08:00:00", (seconds: number) => seconds >= 10 * 3600 || seconds <= 8 * 3600],
])("a window from %s to %s", (from, to, inside) => {
  it("plans every schedule of the campaign inside it, in UTC", async () => {
    const target = createdCampaign(seed, (sequences) => sequences >= 2);
    const data = { ...validUpdateData(sequenceCountOf(target), domainsOfWorkspace(seed, target.campaign.workspace_id)), from_time: from, to_time: to, skip_days: [] };
    const answer = await api.send("PATCH", PATHS.campaign, { kind: "json", value: { campaign_uid: target.summary.uid, update_data: data } });
    expect(answer.status, answer.text.slice(0, 300)).toBe(200);
    const { records } = await api.walk(PATHS.leads, { campaign_uid: target.summary.uid }, resources.lead);
    const times = records.flatMap((lead) => lead.schedules.map((schedule) => schedule.schedule_datetime));
    expect(times.length).toBeGreaterThan(0);
    expect(times.filter((time) => !inside(secondsOfDay(time)))).toEqual([]);
  });
});
