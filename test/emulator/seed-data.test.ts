import { beforeAll, describe, expect, it } from "vitest";
import { campaignStatus, dayName, emailContentType, replyClassification, schedulingStrategy, sequenceLabel, billingPeriod } from "../../src/upstream/enums.ts";
import { PATHS } from "../../src/upstream/endpoints.ts";
import { Api, clickKey, schedulesOf, sequenceCountOf, snapshotAccount, useEmulator, type AccountSnapshot } from "../support/emulator.ts";

/** What a generated seed must contain so that a client meets every case of the spec. */

const emulator = useEmulator({ apiKeys: ["a", "b"], seed: 5 });
let accounts: AccountSnapshot[];
let a: AccountSnapshot;
let now: number;

beforeAll(async () => {
  accounts = await Promise.all(["a", "b"].map((key) => snapshotAccount(new Api(emulator().url, key))));
  a = accounts[0] as AccountSnapshot;
  now = Date.parse(emulator().truth("a").now);
});

const campaignsOf = (snapshot: AccountSnapshot) => snapshot.campaigns.map((data) => data.campaign);
const schedulesIn = (snapshot: AccountSnapshot) => snapshot.campaigns.flatMap((data) => schedulesOf(data.leads));
const nestedRepliesIn = (snapshot: AccountSnapshot) => schedulesIn(snapshot).flatMap((schedule) => schedule.replies);

/** Every string a client can read from the account, for content checks. */
function allText(snapshot: AccountSnapshot): string[] {
  return [
    ...snapshot.workspaces.map((w) => w.name),
    ...snapshot.contactLists.map((l) => l.name),
    ...campaignsOf(snapshot).map((c) => c.settings.name),
    ...snapshot.sequences.flatMap((s) => [s.subject, s.body]),
    ...schedulesIn(snapshot).flatMap((s) => [s.email_data.subject, s.email_data.body]),
    ...snapshot.campaigns.flatMap((data) => data.replies.flatMap((r) => [r.subject, r.body_plain_text, r.body_html])),
    ...snapshot.campaigns.flatMap((data) => data.leads.flatMap((l) => [l.sender_name, l.contact.email_id])),
  ];
}

describe("campaigns", () => {
  it.each(["a", "b"])("account %s has a campaign in every status", (key) => {
    const snapshot = accounts[key === "a" ? 0 : 1] as AccountSnapshot;
    const statuses = new Set(campaignsOf(snapshot).map((c) => c.status));
    expect([...statuses].sort()).toEqual([...campaignStatus.options].sort());
  });

  it.each([
    ["no", (n: number) => n === 0],
    ["exactly one", (n: number) => n === 1],
    ["two or more", (n: number) => n >= 2],
  ] as const)("a campaign in created has %s email sequences", (_label, accepts) => {
    const created = a.campaigns.filter((data) => data.campaign.status === "created");
    expect(created.some((data) => accepts(sequenceCountOf(data)))).toBe(true);
  });

  it("started campaigns carry started_running_at; paused ones campaign_paused and campaign_paused_on; cancelled cancelled_at; complete completed_at", () => {
    for (const campaign of campaignsOf(a)) {
      if (["running", "paused", "complete"].includes(campaign.status)) expect(campaign.started_running_at, campaign.status).not.toBeNull();
      expect(campaign.campaign_paused, campaign.status).toBe(campaign.status === "paused");
      if (campaign.status === "paused") expect(campaign.campaign_paused_on).not.toBeNull();
      if (campaign.status === "cancelled") expect(campaign.cancelled_at).not.toBeNull();
      if (campaign.status === "complete") expect(campaign.completed_at).not.toBeNull();
      if (["creating", "created"].includes(campaign.status)) expect(campaign.started_running_at).toBeNull();
    }
  });

  it("every sending domain of a campaign is a domain of the account", () => {
    const domainIds = new Set(a.domains.map((d) => d.id));
    for (const campaign of campaignsOf(a)) for (const id of campaign.settings.sending_domains) expect(domainIds.has(id)).toBe(true);
  });

  it("campaign names respect 1..300 characters and contain a non-whitespace character", () => {
    for (const campaign of campaignsOf(a)) {
      expect(campaign.settings.name.length).toBeGreaterThan(0);
      expect(campaign.settings.name.length).toBeLessThanOrEqual(300);
      expect(campaign.settings.name).toMatch(/\S/);
    }
  });
});

describe("identifiers as long as the spec allows", () => {
  it.each(["a", "b"])("account %s has a campaign and a lead whose uid is exactly 255 characters", (key) => {
    const snapshot = accounts[key === "a" ? 0 : 1] as AccountSnapshot;
    const campaigns = campaignsOf(snapshot).filter((campaign) => campaign.uid.length === 255);
    expect(campaigns.map((campaign) => campaign.status).sort()).toEqual(["created", "running"]);
    expect(Math.max(...campaignsOf(snapshot).map((campaign) => campaign.uid.length))).toBe(255);
    const leads = snapshot.campaigns.flatMap((data) => data.leads).filter((lead) => lead.uid.length === 255);
    expect(leads).toHaveLength(1);
    expect(emulator().truth(key).keys.leads).toContain(leads[0]?.uid);
    expect(emulator().truth(key).keys.campaigns.filter((uid) => uid.length === 255)).toHaveLength(2);
  });

  it("a 255-character uid works wherever a uid is taken, and neither its short form nor a truncation names the record", async () => {
    const api = new Api(emulator().url, "a");
    const running = campaignsOf(a).find((campaign) => campaign.uid.length === 255 && campaign.status === "running");
    const lead = a.campaigns.flatMap((data) => data.leads).find((candidate) => candidate.uid.length === 255);
    if (!running || !lead) throw new Error("the seed has no long uids");
    const byUid = { campaign_uid: running.uid };
    expect((await api.get(PATHS.campaign, byUid)).status).toBe(200);
    for (const path of [PATHS.leads, PATHS.linkClickEvents, PATHS.emailOpenEvents]) expect((await api.get(path, { ...byUid, limit: 5, offset: 0 })).status).toBe(200);
    expect((await api.get(PATHS.replies, byUid)).status).toBe(200);
    expect(((await api.get(PATHS.lead, { lead_uid: lead.uid })).json as { uid: string }).uid).toBe(lead.uid);
    for (const uid of [running.uid.slice(0, 11), running.uid.slice(0, 254)]) expect((await api.get(PATHS.campaign, { campaign_uid: uid })).status).toBe(404);
    for (const uid of [lead.uid.slice(0, 12), lead.uid.slice(0, 254)]) expect((await api.get(PATHS.lead, { lead_uid: uid })).status).toBe(404);
    expect((await api.get(PATHS.campaign, { campaign_uid: `${running.uid}x` })).status).toBe(400);
  });
});

describe("enumerations", () => {
  it("every campaign status, scheduling strategy, skip day and unsub link type appears", () => {
    const campaigns = campaignsOf(a);
    expect(new Set(campaigns.map((c) => c.settings.scheduling_strategy))).toEqual(new Set(schedulingStrategy.options));
    expect(new Set(campaigns.flatMap((c) => c.settings.skip_days))).toEqual(new Set(dayName.options));
    expect(new Set(campaigns.map((c) => c.settings.unsub_link_type))).toEqual(new Set(["auto", "custom"]));
  });

  it("every sequence label and email content type appears", () => {
    expect(new Set(a.sequences.map((s) => s.label))).toEqual(new Set(sequenceLabel.options));
    expect(new Set(a.sequences.map((s) => s.email_content_type))).toEqual(new Set(emailContentType.options));
  });

  it("every reply classification appears, nested and in the reply listing", () => {
    expect(new Set(nestedRepliesIn(a).map((r) => r.reply_classification))).toEqual(new Set(replyClassification.options));
    expect(new Set(a.campaigns.flatMap((data) => data.replies.map((r) => r.reply_classification)))).toEqual(new Set(replyClassification.options));
  });

  it("every billing period appears among the workspaces of the two accounts", () => {
    expect(new Set(accounts.flatMap((s) => s.workspaces.map((w) => w.billing_period)))).toEqual(new Set(billingPeriod.options));
  });
});

describe("nulls where the spec allows them", () => {
  const nullableCampaignFields = ["scheduled_start_datetime", "campaign_paused_on", "started_running_at", "completed_at", "cancelled_at"] as const;
  it.each(nullableCampaignFields)("campaign %s is null somewhere and set somewhere", (field) => {
    const values = campaignsOf(a).map((c) => c[field]);
    expect(values).toContain(null);
    expect(values.some((value) => value !== null)).toBe(true);
  });

  it.each(["reply_to_address", "from_time", "to_time", "time_zone"] as const)("settings.%s is null somewhere and set somewhere", (field) => {
    const values = campaignsOf(a).map((c) => c.settings[field]);
    expect(values).toContain(null);
    expect(values.some((value) => value !== null)).toBe(true);
  });

  it("unsent schedules have null sent_on, unopened ones null email_opened_on", () => {
    const schedules = schedulesIn(a);
    expect(schedules.some((s) => s.sent_on === null)).toBe(true);
    expect(schedules.some((s) => s.sent_on !== null)).toBe(true);
    for (const schedule of schedules) if (!schedule.email_opened) expect(schedule.email_opened_on).toBeNull();
  });
});

describe("content", () => {
  it.each([
    ["emoji", /\p{Extended_Pictographic}/u],
    ["CJK", /\p{Script=Han}|\p{Script=Hiragana}|\p{Script=Katakana}|\p{Script=Hangul}/u],
    ["right-to-left script", /\p{Script=Arabic}|\p{Script=Hebrew}/u],
  ])("%s text appears", (_label, pattern) => {
    expect(allText(a).some((text) => pattern.test(text))).toBe(true);
  });

  it("some HTML bodies weigh 10 to 20 KB", () => {
    const bodies = [...a.sequences.map((s) => s.body), ...a.campaigns.flatMap((data) => data.replies.map((r) => r.body_html))];
    const big = bodies.filter((body) => /<[a-z][^>]*>/i.test(body) && Buffer.byteLength(body) >= 10_240 && Buffer.byteLength(body) <= 20_480);
    expect(big.length).toBeGreaterThan(0);
  });

  it("text/html sequences have tags in their body and text/plain ones have none", () => {
    for (const sequence of a.sequences) {
      if (sequence.email_content_type === "text/html") expect(sequence.body).toMatch(/<[a-z][^>]*>/i);
      if (sequence.email_content_type === "text/plain") expect(sequence.body).not.toMatch(/<[a-z][^>]*>/i);
    }
  });

  it("schedules' email_data agree with the sequence they point at", () => {
    const byId = new Map(a.sequences.map((s) => [s.id, s]));
    for (const schedule of schedulesIn(a)) expect(schedule.email_data.email_content_type).toBe(byId.get(schedule.email_data.id)?.email_content_type);
  });
});

describe("events agree with schedules", () => {
  it("each schedule's open events number email_open_count, and email_opened/email_opened_on follow", () => {
    for (const data of a.campaigns) {
      const opensBySchedule = new Map<number, string[]>();
      for (const open of data.opens) opensBySchedule.set(open.schedule_id, [...(opensBySchedule.get(open.schedule_id) ?? []), open.opened_on]);
      for (const schedule of schedulesOf(data.leads)) {
        const opens = opensBySchedule.get(schedule.id) ?? [];
        expect(opens.length, `schedule ${schedule.id}`).toBe(schedule.email_open_count);
        expect(schedule.email_opened).toBe(opens.length > 0);
        if (schedule.email_opened_on !== null) expect(opens.map(Date.parse)).toContain(Date.parse(schedule.email_opened_on));
      }
      expect(data.opens.every((open) => schedulesOf(data.leads).some((s) => s.id === open.schedule_id))).toBe(true);
    }
    expect(a.campaigns.some((data) => schedulesOf(data.leads).some((s) => s.email_open_count >= 2))).toBe(true);
  });

  it("the reply listing equals the replies nested in schedules, plus mail_from and a subject of at most 500 characters", () => {
    for (const data of a.campaigns) {
      const nested = schedulesOf(data.leads).flatMap((schedule) => schedule.replies.map((reply) => ({ ...reply, schedule_id: schedule.id })));
      const listed = new Map(data.replies.map((reply) => [reply.id, reply]));
      expect([...listed.keys()].sort()).toEqual(nested.map((reply) => reply.id).sort());
      for (const reply of nested) {
        const { mail_from, subject, ...rest } = listed.get(reply.id) ?? { mail_from: "", subject: "" };
        expect(rest).toEqual(reply);
        expect(mail_from.length).toBeGreaterThan(0);
        expect(subject.length).toBeLessThanOrEqual(500);
      }
      for (const schedule of schedulesOf(data.leads)) expect(schedule.reply_received).toBe(schedule.replies.length > 0);
    }
  });

  it("the click listing equals the clicks nested in schedules, without their id", () => {
    for (const data of a.campaigns) {
      const nested = schedulesOf(data.leads).flatMap((schedule) => schedule.link_click_events.map((click) => ({ ...click, schedule_id: schedule.id })));
      expect(data.clicks.map(clickKey).sort()).toEqual(nested.map(clickKey).sort());
      for (const click of data.clicks) expect(click).not.toHaveProperty("id");
    }
    expect(a.campaigns.some((data) => data.clicks.length > 0)).toBe(true);
  });

  it("nothing happens to a schedule before it was sent, and nothing is dated after the simulated now", () => {
    for (const data of a.campaigns) {
      for (const schedule of schedulesOf(data.leads)) {
        const events = [
          ...schedule.link_click_events.map((c) => c.clicked_on),
          ...schedule.replies.map((r) => r.received_on),
          ...data.opens.filter((o) => o.schedule_id === schedule.id).map((o) => o.opened_on),
        ].map(Date.parse);
        if (schedule.sent_on === null) {
          expect(events, `unsent schedule ${schedule.id}`).toEqual([]);
          continue;
        }
        const sent = Date.parse(schedule.sent_on);
        expect(sent).toBeLessThanOrEqual(now);
        for (const at of events) {
          expect(at).toBeGreaterThanOrEqual(sent);
          expect(at).toBeLessThanOrEqual(now);
        }
      }
    }
  });

  it("a contact shared by several leads reads the same in each", () => {
    const byId = new Map<number, string>();
    let shared = 0;
    for (const lead of a.campaigns.flatMap((data) => data.leads)) {
      const seen = byId.get(lead.contact.id);
      if (seen !== undefined) {
        shared += 1;
        expect(JSON.stringify(lead.contact)).toBe(seen);
      }
      byId.set(lead.contact.id, JSON.stringify(lead.contact));
    }
    expect(shared).toBeGreaterThan(0);
  });

  it("lead and schedule identifiers are unique across the account", () => {
    const leads = a.campaigns.flatMap((data) => data.leads.map((lead) => lead.uid));
    const schedules = schedulesIn(a).map((schedule) => schedule.id);
    expect(new Set(leads).size).toBe(leads.length);
    expect(new Set(schedules).size).toBe(schedules.length);
  });

  it("every lead's schedules belong to sequences of its own campaign only", () => {
    const owner = new Map<number, string>();
    for (const data of a.campaigns) {
      for (const schedule of schedulesOf(data.leads)) {
        const previous = owner.get(schedule.email_data.id);
        expect(previous === undefined || previous === data.summary.uid).toBe(true);
        owner.set(schedule.email_data.id, data.summary.uid);
      }
    }
  });
});
