import { beforeAll, describe, expect, it } from "vitest";
import { PATHS } from "../../src/upstream/endpoints.ts";
import * as resources from "../../src/upstream/resources.ts";
import {
  Api,
  campaignWithStatus,
  createdCampaign,
  domainsOfWorkspace,
  messageOf,
  parseStrict,
  schedulesOf,
  sequenceCountOf,
  snapshotAccount,
  useEmulator,
  validUpdateData,
  type AccountSnapshot,
} from "../support/emulator.ts";

/** One focused success test per endpoint of spec section 4; every record must parse with its schema. */

const emulator = useEmulator({ apiKeys: ["a", "b"], seed: 7 });
let api: Api;
let seed: AccountSnapshot;

beforeAll(async () => {
  api = new Api(emulator().url, "a");
  seed = await snapshotAccount(api);
});

function busiestCampaign() {
  const [first] = [...seed.campaigns].sort((x, y) => y.leads.length - x.leads.length);
  if (!first || first.leads.length === 0) throw new Error("the seed has no campaign with leads");
  return first;
}

describe("reads", () => {
  it("#1 GET campaigns/ lists campaign items in a {data,total} envelope", async () => {
    const page = await api.page(PATHS.campaigns, { limit: 100 });
    expect(page.total).toBeGreaterThan(0);
    expect(page.data.length).toBe(Math.min(100, page.total));
    for (const record of page.data) parseStrict(resources.campaignListItem, record, "campaign item");
  });

  it("#2 GET campaign/?campaign_uid= returns the full campaign, consistent with its list item", async () => {
    for (const { summary } of seed.campaigns) {
      const campaign = await api.ok(PATHS.campaign, { campaign_uid: summary.uid }, resources.campaign);
      expect(campaign.uid).toBe(summary.uid);
      expect(campaign.settings.name).toBe(summary.name);
      expect(campaign.status).toBe(summary.status);
      expect(campaign.workspace_id).toBe(summary.workspace_id);
      expect(Date.parse(campaign.created_on)).toBe(Date.parse(summary.created_on));
    }
  });

  it("#9 GET email-sequence/?id= returns the sequence that schedules point at", async () => {
    const schedule = schedulesOf(busiestCampaign().leads)[0];
    if (!schedule) throw new Error("the busiest campaign has no schedule");
    const sequence = await api.ok(PATHS.emailSequence, { id: schedule.email_data.id }, resources.emailSequence);
    expect(sequence.id).toBe(schedule.email_data.id);
  });

  it("#11 GET leads/?campaign_uid= pages the campaign's leads", async () => {
    const uid = busiestCampaign().summary.uid;
    const page = await api.page(PATHS.leads, { campaign_uid: uid, limit: 5, offset: 0 });
    expect(page.total).toBe(busiestCampaign().leads.length);
    for (const record of page.data) parseStrict(resources.lead, record, "lead");
  });

  it("#12 GET lead/?lead_uid= returns the same lead as the listing", async () => {
    const lead = busiestCampaign().leads[0];
    if (!lead) throw new Error("no lead");
    expect(await api.ok(PATHS.lead, { lead_uid: lead.uid }, resources.lead)).toEqual(lead);
  });

  it("#13 GET replies/?campaign_uid= answers a bare JSON array of replies", async () => {
    for (const { summary } of seed.campaigns) {
      const answer = await api.get(PATHS.replies, { campaign_uid: summary.uid });
      expect(answer.status).toBe(200);
      expect(Array.isArray(answer.json)).toBe(true);
      parseStrict(resources.reply.array(), answer.json, "replies");
    }
    expect(seed.campaigns.some((data) => data.replies.length > 0)).toBe(true);
  });

  it("#14 GET campaign/link-click-events/?campaign_uid= pages click events", async () => {
    const withClicks = seed.campaigns.find((data) => data.clicks.length > 0);
    if (!withClicks) throw new Error("the seed has no click event");
    const page = await api.page(PATHS.linkClickEvents, { campaign_uid: withClicks.summary.uid, limit: 100, offset: 0 });
    expect(page.total).toBe(withClicks.clicks.length);
    for (const record of page.data) parseStrict(resources.linkClickEvent, record, "click event");
  });

  it("#15 GET campaign/email-open-events/?campaign_uid= pages open events", async () => {
    const withOpens = seed.campaigns.find((data) => data.opens.length > 0);
    if (!withOpens) throw new Error("the seed has no open event");
    const page = await api.page(PATHS.emailOpenEvents, { campaign_uid: withOpens.summary.uid, limit: 100, offset: 0 });
    expect(page.total).toBe(withOpens.opens.length);
    for (const record of page.data) parseStrict(resources.emailOpenEvent, record, "open event");
  });

  it("#16 GET domains/ pages the account's domains", async () => {
    const page = await api.page(PATHS.domains, { limit: 100 });
    expect(page.total).toBeGreaterThan(0);
    for (const record of page.data) parseStrict(resources.domain, record, "domain");
  });

  it("#17 GET contacts/ pages the account's contact lists", async () => {
    const page = await api.page(PATHS.contacts, { limit: 100 });
    expect(page.total).toBeGreaterThan(0);
    for (const record of page.data) parseStrict(resources.contactList, record, "contact list");
  });

  it("#18 GET workspaces/ answers a bare JSON array of workspaces", async () => {
    const answer = await api.get(PATHS.workspaces);
    expect(answer.status).toBe(200);
    expect(Array.isArray(answer.json)).toBe(true);
    expect(parseStrict(resources.workspace.array(), answer.json, "workspaces").length).toBeGreaterThan(0);
  });

  it("every answer is JSON with a JSON content type", async () => {
    const answer = await api.get(PATHS.campaigns);
    expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
  });
});

describe("identifier parameters (contract A.1)", () => {
  const requiring = [
    [PATHS.campaign, "campaign_uid"],
    [PATHS.emailSequence, "id"],
    [PATHS.leads, "campaign_uid"],
    [PATHS.lead, "lead_uid"],
    [PATHS.replies, "campaign_uid"],
    [PATHS.linkClickEvents, "campaign_uid"],
    [PATHS.emailOpenEvents, "campaign_uid"],
  ] as const;

  it.each(requiring)("GET %s without %s answers 400 naming it", async (path, param) => {
    const answer = await api.get(path);
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toContain(param);
  });

  it.each(requiring)("GET %s with an unknown %s answers 404 {message}", async (path, param) => {
    const answer = await api.get(path, { [param]: param === "id" ? 2_000_000_001 : "no-such-uid" });
    expect(answer.status).toBe(404);
    messageOf(answer);
  });

  it("GET email-sequence/?id=abc answers 400 naming id", async () => {
    const answer = await api.get(PATHS.emailSequence, { id: "abc" });
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toContain("id");
  });

  it("DELETE email-sequence/ without an id answers 400 naming id", async () => {
    const answer = await api.request("DELETE", PATHS.emailSequence);
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toContain("id");
  });
});

describe("writes", () => {
  it("#3 PATCH campaign/ updates a created campaign and answers the full campaign", async () => {
    const target = createdCampaign(seed);
    const updateData = validUpdateData(sequenceCountOf(target), domainsOfWorkspace(seed, target.campaign.workspace_id).slice(0, 1));
    const answer = await api.send("PATCH", PATHS.campaign, { kind: "json", value: { campaign_uid: target.summary.uid, update_data: updateData } });
    expect(answer.status).toBe(200);
    const campaign = parseStrict(resources.campaign, answer.json, "updated campaign");
    expect(campaign.uid).toBe(target.summary.uid);
    expect(campaign.settings).toMatchObject(updateData);
  });

  it("#8 POST email-sequence/ creates a sequence, #9 reads it back, #10 deletes it", async () => {
    const uid = createdCampaign(seed).summary.uid;
    const sequenceData = { order: 1, subject: "Quick question", body: "Hi there,\nare you the right person?", next_message_days: 3 };
    const created = await api.send("POST", PATHS.emailSequence, { kind: "json", value: { campaign_uid: uid, sequence_data: sequenceData } });
    expect(created.status).toBe(200);
    const sequence = parseStrict(resources.emailSequence, created.json, "created sequence");
    expect(sequence).toMatchObject(sequenceData);
    expect(await api.ok(PATHS.emailSequence, { id: sequence.id }, resources.emailSequence)).toEqual(sequence);
    const deleted = await api.request("DELETE", PATHS.emailSequence, { query: { id: sequence.id } });
    expect(deleted.status).toBe(200);
    messageOf(deleted);
    expect((await api.get(PATHS.emailSequence, { id: sequence.id })).status).toBe(404);
  });

  it("#4 POST campaign/start/ starts a scheduled campaign", async () => {
    const uid = campaignWithStatus(seed, "scheduled").summary.uid;
    const answer = await api.send("POST", PATHS.campaignStart, { kind: "json", value: { campaign_uid: uid } });
    expect(answer.status).toBe(200);
    messageOf(answer);
    expect((await api.ok(PATHS.campaign, { campaign_uid: uid }, resources.campaign)).status).toBe("running");
  });

  it("#5 POST campaign/pause/ pauses a running campaign", async () => {
    const uid = campaignWithStatus(seed, "running").summary.uid;
    const answer = await api.send("POST", PATHS.campaignPause, { kind: "json", value: { campaign_uid: uid } });
    expect(answer.status).toBe(200);
    messageOf(answer);
    expect((await api.ok(PATHS.campaign, { campaign_uid: uid }, resources.campaign)).status).toBe("paused");
  });

  it("#6 POST campaign/resume/ resumes a paused campaign", async () => {
    const uid = campaignWithStatus(seed, "paused").summary.uid;
    const answer = await api.send("POST", PATHS.campaignResume, { kind: "json", value: { campaign_uid: uid } });
    expect(answer.status).toBe(200);
    messageOf(answer);
    expect((await api.ok(PATHS.campaign, { campaign_uid: uid }, resources.campaign)).status).toBe("running");
  });

  it("#7 POST campaign/cancel/ cancels a created campaign", async () => {
    const created = seed.campaigns.filter((data) => data.campaign.status === "created");
    const uid = created[created.length - 1]?.summary.uid;
    const answer = await api.send("POST", PATHS.campaignCancel, { kind: "json", value: { campaign_uid: uid } });
    expect(answer.status).toBe(200);
    messageOf(answer);
    expect((await api.ok(PATHS.campaign, { campaign_uid: uid ?? "" }, resources.campaign)).status).toBe("cancelled");
  });


});
