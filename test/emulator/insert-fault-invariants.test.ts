import { beforeAll, describe, expect, it } from "vitest";
import { PATHS } from "../../src/upstream/endpoints.ts";
import * as resources from "../../src/upstream/resources.ts";
import { Api, snapshotAccount, useEmulator, type AccountSnapshot } from "../support/emulator.ts";

/**
 * records that the insert fault adds must obey the same rules as every other record
 * (the fault's own effect is "a record arrives between two page requests", nothing more).
 */

const emulator = useEmulator({ apiKeys: ["a"], seed: 8 });
let api: Api;
let seed: AccountSnapshot;

beforeAll(async () => {
  api = new Api(emulator().url, "a");
  seed = await snapshotAccount(api);
});

/** Pages a listing at offset 0 under hostile faults until its total grows (an insert fault); answers the new total. */
async function untilInserted(path: string, query: Record<string, string>, before: number): Promise<number> {
  emulator().settings.faults = "hostile";
  try {
    for (let attempt = 0; attempt < 2_000; attempt++) {
      const answer = await api.get(path, { ...query, limit: 1, offset: 0 }).catch(() => undefined);
      if (answer?.status !== 200) continue;
      const total = (answer.json as { total: number }).total;
      if (total > before) return total;
    }
  } finally {
    emulator().settings.faults = "none";
  }
  throw new Error("no insert fault met");
}

describe("insert fault on a scheduled campaign's leads", () => {
  it("a lead that joins a scheduled campaign is not planned (nor sent) before the campaign's start", async () => {
    const target = seed.campaigns.find((data) => data.campaign.status === "scheduled");
    if (!target) throw new Error("no scheduled campaign");
    const uid = target.summary.uid;
    const start = target.campaign.scheduled_start_datetime as string;
    const known = new Set(target.leads.map((lead) => lead.uid));
    await untilInserted(PATHS.leads, { campaign_uid: uid }, target.leads.length);

    const { records } = await api.walk(PATHS.leads, { campaign_uid: uid }, resources.lead);
    const joined = records.filter((lead) => !known.has(lead.uid));
    expect(joined.length).toBeGreaterThan(0);
    // Every schedule of the original leads lies at or after the planned start…
    for (const lead of target.leads) for (const schedule of lead.schedules) expect(Date.parse(schedule.schedule_datetime)).toBeGreaterThanOrEqual(Date.parse(start));
    // …and so must the joined lead's.
    for (const lead of joined) {
      for (const schedule of lead.schedules) {
        expect(Date.parse(schedule.schedule_datetime), `${lead.uid} schedule ${schedule.id} at ${schedule.schedule_datetime}, campaign starts ${start}`).toBeGreaterThanOrEqual(Date.parse(start));
      }
    }
  });
});

describe("insert fault on event listings", () => {
  const cases = [
    { path: PATHS.emailOpenEvents, setting: "open_tracking_enabled" },
    { path: PATHS.linkClickEvents, setting: "click_tracking_enabled" },
  ] as const;
  it.each(cases)("$path gains no event on a campaign whose settings.$setting is false", async ({ path, setting }) => {
    // In the generated data such campaigns hold no event of that kind (activity.ts plans none)…
    const target = seed.campaigns.find(
      (data) => data.campaign.settings[setting] === false && data.leads.some((lead) => lead.schedules.some((schedule) => schedule.status === "sent")),
    );
    if (!target) throw new Error(`no campaign with ${setting} false and a sent email`);
    const uid = target.summary.uid;
    const before = (await api.page(path, { campaign_uid: uid, limit: 1 })).total;
    expect(before).toBe(0);
    // …and hostile faults, whose inserts add late events to the campaigns that track them, add none to it.
    emulator().settings.faults = "hostile";
    let most = before;
    try {
      for (let attempt = 0; attempt < 100; attempt++) {
        const answer = await api.get(path, { campaign_uid: uid, limit: 1, offset: 0 }).catch(() => undefined);
        if (answer?.status === 200) most = Math.max(most, (answer.json as { total: number }).total);
      }
    } finally {
      emulator().settings.faults = "none";
    }
    expect(most, `${uid} has ${setting} false, yet ${path} listed ${most} event(s)`).toBe(0);
  });
});
