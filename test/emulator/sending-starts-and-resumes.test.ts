import { beforeAll, describe, expect, it } from "vitest";
import { PATHS } from "../../src/upstream/endpoints.ts";
import * as resources from "../../src/upstream/resources.ts";
import { Api, snapshotAccount, useEmulator, type AccountSnapshot } from "../support/emulator.ts";

/**
 * contract A.4 — a campaign sends only once it is running (start sets started_running_at;
 * `scheduled` becomes `running` at scheduled_start_datetime). No faults here: the simulation alone.
 */

const emulator = useEmulator({ apiKeys: ["a"], seed: 7 });
let api: Api;
let seed: AccountSnapshot;

beforeAll(async () => {
  api = new Api(emulator().url, "a");
  seed = await snapshotAccount(api);
});

describe("scheduled campaign reaching its start (no faults)", () => {
  it("no email of a campaign is sent before its started_running_at, new leads included", async () => {
    const scheduled = seed.campaigns.filter((data) => data.campaign.status === "scheduled");
    expect(scheduled.length).toBeGreaterThan(0);
    const latest = Math.max(...scheduled.map((data) => Date.parse(data.campaign.scheduled_start_datetime as string)));
    emulator().advance(Math.ceil((latest - Date.parse(emulator().truth("a").now)) / 1000) + 5 * 86_400);
    const early: string[] = [];
    for (const data of scheduled) {
      const uid = data.summary.uid;
      const campaign = await api.ok(PATHS.campaign, { campaign_uid: uid }, resources.campaign);
      expect(campaign.started_running_at, uid).not.toBeNull();
      const { records } = await api.walk(PATHS.leads, { campaign_uid: uid }, resources.lead);
      for (const lead of records) {
        for (const schedule of lead.schedules) {
          if (schedule.sent_on !== null && Date.parse(schedule.sent_on) < Date.parse(campaign.started_running_at as string)) {
            early.push(`${uid} ${lead.uid}/${schedule.id} sent ${schedule.sent_on} < started_running_at ${campaign.started_running_at}`);
          }
        }
      }
    }
    expect(early).toEqual([]);
  });
});

describe("resume of a paused campaign (no faults)", () => {
  const other = useEmulator({ apiKeys: ["a", "b"], seed: 7 });

  it("sends no more than settings.daily_email_limit emails per day, inside from_time..to_time, after a resume", async () => {
    const client = new Api(other().url, "b");
    const snapshot = await snapshotAccount(client);
    const paused = snapshot.campaigns.find((data) => data.campaign.status === "paused" && data.leads.some((lead) => lead.schedules.some((schedule) => schedule.status === "created")));
    if (!paused) throw new Error("no paused campaign with unsent emails");
    const uid = paused.summary.uid;
    const { daily_email_limit: limit, from_time: from, to_time: to, time_zone: zone } = paused.campaign.settings;
    // The campaign stays paused for a week, then is resumed (contract A.4: paused -> running).
    other().advance(7 * 86_400);
    const resumedAt = Date.parse(other().truth("b").now);
    const resumed = await client.send("POST", PATHS.campaignResume, { kind: "json", value: { campaign_uid: uid } });
    expect(resumed.status).toBe(200);
    other().advance(86_400);
    const { records } = await client.walk(PATHS.leads, { campaign_uid: uid }, resources.lead);
    const sent = records.flatMap((lead) => lead.schedules).filter((schedule) => schedule.sent_on !== null && Date.parse(schedule.sent_on) >= resumedAt);
    expect(sent.length).toBeGreaterThan(0);
    const local = new Intl.DateTimeFormat("en-CA", { timeZone: zone ?? "UTC", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" });
    const perDay = new Map<string, number>();
    const outside: string[] = [];
    for (const schedule of sent) {
      const [day, time] = local.format(new Date(schedule.sent_on as string)).split(", ") as [string, string];
      perDay.set(day, (perDay.get(day) ?? 0) + 1);
      if (from !== null && to !== null && from <= to && (time < from || time > to)) outside.push(`${schedule.id} sent ${schedule.sent_on} (${time} ${zone})`);
    }
    const summary = `daily_email_limit ${limit}, window ${from}-${to} ${zone}; sends per local day ${JSON.stringify(Object.fromEntries(perDay))}; first outside the window: ${outside.slice(0, 3).join(", ")}`;
    expect(Math.max(...perDay.values()), summary).toBeLessThanOrEqual(limit);
    expect(outside.length, summary).toBe(0);
  });
});
