import { beforeAll, describe, expect, it } from "vitest";
import { PATHS } from "../../src/upstream/endpoints.ts";
import * as resources from "../../src/upstream/resources.ts";
import { Api, createdCampaign, domainsOfWorkspace, sequenceCountOf, snapshotAccount, useEmulator, validUpdateData, type AccountSnapshot } from "../support/emulator.ts";

/**
 * spec 2.3 (Campaign settings): "daily_email_limit | integer 0..2147483647 | maximum emails per day".
 * The limit counts emails, not leads: follow-up steps and leads that join count too. Days are the
 * campaign's own (src/emulator/README.md "Planning": "The window and the days are read in the
 * campaign's `time_zone`").
 */

const emulator = useEmulator({ apiKeys: ["a"], seed: 7 });
let api: Api;
let seed: AccountSnapshot;

beforeAll(async () => {
  api = new Api(emulator().url, "a");
  seed = await snapshotAccount(api);
});

function localDay(iso: string, zone: string | null): string {
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat("en-CA", { timeZone: zone ?? "UTC", year: "numeric", month: "2-digit", day: "2-digit" });
  } catch {
    format = new Intl.DateTimeFormat("en-CA", { timeZone: "UTC", year: "numeric", month: "2-digit", day: "2-digit" });
  }
  return format.format(new Date(iso));
}

describe("daily_email_limit (spec 2.3: maximum emails per day)", () => {
  it("no campaign sends more emails in one of its days than its daily_email_limit (generated history, multi-step campaigns)", () => {
    const over: string[] = [];
    for (const data of seed.campaigns) {
      const { daily_email_limit: limit, time_zone: zone } = data.campaign.settings;
      const perDay = new Map<string, number>();
      for (const lead of data.leads) {
        for (const schedule of lead.schedules) {
          if (schedule.sent_on === null) continue;
          const day = localDay(schedule.sent_on, zone);
          perDay.set(day, (perDay.get(day) ?? 0) + 1);
        }
      }
      for (const [day, count] of perDay) {
        if (count > limit) over.push(`${data.campaign.uid.slice(0, 12)} (${data.campaign.status}, ${data.leads[0]?.schedules.length ?? 0} steps): ${count} emails sent on ${day}, daily_email_limit ${limit}`);
      }
    }
    expect(over).toEqual([]);
  });

  it("a campaign updated to daily_email_limit 10, started and played 30 days sends at most 10 emails in any of its days", async () => {
    const target = createdCampaign(seed, (sequences) => sequences >= 2);
    expect(target.leads.length).toBeGreaterThan(10);
    const uid = target.summary.uid;
    const update_data = { ...validUpdateData(sequenceCountOf(target), domainsOfWorkspace(seed, target.campaign.workspace_id)), daily_email_limit: 10, skip_days: [], time_zone: "UTC" };
    const updated = await api.send("PATCH", PATHS.campaign, { kind: "json", value: { campaign_uid: uid, update_data } });
    expect(updated.status, updated.text.slice(0, 300)).toBe(200);
    const started = await api.send("POST", PATHS.campaignStart, { kind: "json", value: { campaign_uid: uid } });
    expect(started.status, started.text).toBe(200);
    emulator().advance(30 * 86_400);
    const { records } = await api.walk(PATHS.leads, { campaign_uid: uid }, resources.lead);
    const perDay = new Map<string, number>();
    for (const lead of records) for (const schedule of lead.schedules) if (schedule.sent_on !== null) perDay.set(schedule.sent_on.slice(0, 10), (perDay.get(schedule.sent_on.slice(0, 10)) ?? 0) + 1);
    expect(perDay.size).toBeGreaterThan(0);
    const over = [...perDay].filter(([, count]) => count > 10).map(([day, count]) => `${count} emails on ${day}`);
    expect(over, `sends per UTC day: ${JSON.stringify(Object.fromEntries(perDay))}`).toEqual([]);
  });
});
