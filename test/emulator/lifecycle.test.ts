import { describe, expect, it } from "vitest";
import { LIFECYCLE_PATHS, PATHS, type Lifecycle } from "../../src/upstream/endpoints.ts";
import { TERMINAL_CAMPAIGN_STATUSES, type CampaignStatus } from "../../src/upstream/enums.ts";
import * as resources from "../../src/upstream/resources.ts";
import { Api, bodyOf, messageOf, readCampaign, sequenceCountOf, useEmulator } from "../support/emulator.ts";

/** Contract A.4: start, pause, resume, cancel. Each mutating test works in an account of its own. */

const ACCOUNTS = ["readonly", "start-created", "start-empty", "start-after-sequence", "start-scheduled", "pause", "resume", "cancel-created", "cancel-scheduled", "cancel-running", "cancel-paused", "chain"];
const emulator = useEmulator({ apiKeys: ACCOUNTS, seed: 19 });

const apiFor = (key: string) => new Api(emulator().url, key);

async function summaryIn(key: string, status: CampaignStatus, accepts: (sequences: number) => boolean): Promise<resources.CampaignListItem> {
  const api = apiFor(key);
  const { records } = await api.walk(PATHS.campaigns, {}, resources.campaignListItem);
  for (const summary of records.filter((record) => record.status === status)) {
    if (accepts(sequenceCountOf(await readCampaign(api, summary)))) return summary;
  }
  throw new Error(`account ${key} has no ${status} campaign with the wanted number of sequences`);
}

async function campaignIn(key: string, status: CampaignStatus, accepts: (sequences: number) => boolean = () => true): Promise<string> {
  return (await summaryIn(key, status, accepts)).uid;
}

function act(key: string, operation: Lifecycle, uid: string) {
  return apiFor(key).send("POST", LIFECYCLE_PATHS[operation], { kind: "json", value: { campaign_uid: uid } });
}

function read(key: string, uid: string) {
  return apiFor(key).ok(PATHS.campaign, { campaign_uid: uid }, resources.campaign);
}

async function expectSuccess(key: string, operation: Lifecycle, uid: string): Promise<resources.Campaign> {
  const answer = await act(key, operation, uid);
  expect(answer.status, answer.text).toBe(200);
  expect(messageOf(answer).length).toBeGreaterThan(0);
  return read(key, uid);
}

function expectStampedNow(key: string, value: string | null, campaign: resources.Campaign): void {
  expect(value).not.toBeNull();
  const at = Date.parse(value ?? "");
  expect(at).toBeLessThanOrEqual(Date.parse(emulator().truth(key).now));
  expect(at).toBeGreaterThanOrEqual(Date.parse(campaign.created_on));
}

describe("allowed transitions", () => {
  it("start moves a created campaign with a sequence to running and sets started_running_at", async () => {
    const uid = await campaignIn("start-created", "created", (n) => n >= 1);
    const campaign = await expectSuccess("start-created", "start", uid);
    expect(campaign.status).toBe("running");
    expectStampedNow("start-created", campaign.started_running_at, campaign);
  });

  it("start of a created campaign without any sequence answers 409 and changes nothing", async () => {
    const uid = await campaignIn("start-empty", "created", (n) => n === 0);
    const before = await read("start-empty", uid);
    const answer = await act("start-empty", "start", uid);
    expect(answer.status).toBe(409);
    expect(messageOf(answer)).toMatch(/sequence/);
    expect(await read("start-empty", uid)).toEqual(before);
  });

  it("an empty created campaign starts once it has a sequence", async () => {
    const key = "start-after-sequence";
    const uid = await campaignIn(key, "created", (n) => n === 0);
    const sequence = await apiFor(key).send("POST", PATHS.emailSequence, {
      kind: "json",
      value: { campaign_uid: uid, sequence_data: { order: 1, subject: "Hello", body: "Hi" } },
    });
    expect(sequence.status).toBe(200);
    expect((await expectSuccess(key, "start", uid)).status).toBe("running");
  });

  it("start moves a scheduled campaign to running and sets started_running_at", async () => {
    const uid = await campaignIn("start-scheduled", "scheduled");
    const campaign = await expectSuccess("start-scheduled", "start", uid);
    expect(campaign.status).toBe("running");
    expectStampedNow("start-scheduled", campaign.started_running_at, campaign);
  });

  it("pause moves running to paused with campaign_paused and campaign_paused_on", async () => {
    const uid = await campaignIn("pause", "running");
    const campaign = await expectSuccess("pause", "pause", uid);
    expect(campaign.status).toBe("paused");
    expect(campaign.campaign_paused).toBe(true);
    expectStampedNow("pause", campaign.campaign_paused_on, campaign);
  });

  it("resume moves paused to running and clears campaign_paused", async () => {
    const uid = await campaignIn("resume", "paused");
    const campaign = await expectSuccess("resume", "resume", uid);
    expect(campaign.status).toBe("running");
    expect(campaign.campaign_paused).toBe(false);
  });

  it.each([
    ["created", "cancel-created"],
    ["scheduled", "cancel-scheduled"],
    ["running", "cancel-running"],
    ["paused", "cancel-paused"],
  ] as const)("cancel moves %s to cancelled, sets cancelled_at and keeps the campaign's data", async (status, key) => {
    const api = apiFor(key);
    const summary = await summaryIn(key, status, () => true);
    const uid = summary.uid;
    const before = await readCampaign(api, summary);
    const campaign = await expectSuccess(key, "cancel", uid);
    expect(campaign.status).toBe("cancelled");
    expectStampedNow(key, campaign.cancelled_at, campaign);
    const after = await readCampaign(api, summary);
    expect(after.leads.map((lead) => lead.uid)).toEqual(before.leads.map((lead) => lead.uid));
    expect(after.replies.length).toBe(before.replies.length);
    expect(after.opens.length).toBe(before.opens.length);
    expect(after.clicks.length).toBe(before.clicks.length);
  });

  it("start, pause, resume, cancel chain; a cancelled campaign cannot be restarted", async () => {
    const uid = await campaignIn("chain", "created", (n) => n >= 1);
    expect((await expectSuccess("chain", "start", uid)).status).toBe("running");
    expect((await expectSuccess("chain", "pause", uid)).status).toBe("paused");
    expect((await expectSuccess("chain", "resume", uid)).status).toBe("running");
    expect((await expectSuccess("chain", "cancel", uid)).status).toBe("cancelled");
    const restart = await act("chain", "start", uid);
    expect(restart.status).toBe(409);
    messageOf(restart);
  });
});

/** A 409 names the campaign's state and the states the operation needs (contract A.4). */
const ALLOWED_FROM: Record<Lifecycle, CampaignStatus[]> = {
  start: ["created", "scheduled"],
  pause: ["running"],
  resume: ["paused"],
  cancel: ["created", "scheduled", "running", "paused"],
};

describe("disallowed transitions answer 409 and change nothing", () => {
  const disallowed: [Lifecycle, CampaignStatus][] = [
    ...(["creating", "running", "paused", "complete", "cancelled", "failed"] as const).map((s): [Lifecycle, CampaignStatus] => ["start", s]),
    ...(["creating", "created", "scheduled", "paused", "complete", "cancelled", "failed"] as const).map((s): [Lifecycle, CampaignStatus] => ["pause", s]),
    ...(["creating", "created", "scheduled", "running", "complete", "cancelled", "failed"] as const).map((s): [Lifecycle, CampaignStatus] => ["resume", s]),
    ...(["creating", ...TERMINAL_CAMPAIGN_STATUSES] as const).map((s): [Lifecycle, CampaignStatus] => ["cancel", s]),
  ];

  it.each(disallowed)("%s from %s", async (operation, status) => {
    const uid = await campaignIn("readonly", status);
    const before = await read("readonly", uid);
    const answer = await act("readonly", operation, uid);
    expect(answer.status).toBe(409);
    const message = messageOf(answer);
    expect(message).toContain(`campaign is ${status};`);
    const required = message.slice(message.indexOf("allowed only in"));
    for (const state of ALLOWED_FROM[operation]) expect(required).toContain(state);
    expect(await read("readonly", uid)).toEqual(before);
  });
});

describe("request errors", () => {
  it.each(["start", "pause", "resume", "cancel"] as const)("%s without campaign_uid answers 400 naming it", async (operation) => {
    const answer = await apiFor("readonly").send("POST", LIFECYCLE_PATHS[operation], { kind: "json", value: {} });
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toContain("campaign_uid");
  });

  it.each(["start", "pause", "resume", "cancel"] as const)("%s of an unknown campaign answers 404", async (operation) => {
    const answer = await act("readonly", operation, "no-such-campaign");
    expect(answer.status).toBe(404);
    messageOf(answer);
  });

  // Spec 2.1 and 4: lifecycle POSTs take a JSON body; only update campaign and create email sequence also take forms.
  it.each(["form", "multipart"] as const)("cancel with a %s body answers 400 naming the body, and changes nothing", async (encoding) => {
    const uid = await campaignIn("readonly", "created");
    const before = await read("readonly", uid);
    const answer = await apiFor("readonly").send("POST", LIFECYCLE_PATHS.cancel, bodyOf(encoding, { campaign_uid: uid }));
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toMatch(/^body: must be JSON/);
    expect(await read("readonly", uid)).toEqual(before);
  });

  it.each(["start", "pause", "resume", "cancel"] as const)("%s with a form body answers 400 before looking the campaign up", async (operation) => {
    const answer = await apiFor("readonly").send("POST", LIFECYCLE_PATHS[operation], bodyOf("form", { campaign_uid: "no-such-campaign" }));
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toMatch(/^body: must be JSON/);
  });

  // Media types are case-insensitive (RFC 9110 §8.3.1): a form body stays a form body however its type is spelled.
  it.each(["Application/X-WWW-Form-Urlencoded", "APPLICATION/X-WWW-FORM-URLENCODED; Charset=UTF-8"])(
    "pause with a form body sent as %s answers 400 naming the body, and changes nothing",
    async (contentType) => {
      const uid = await campaignIn("readonly", "running");
      const before = await read("readonly", uid);
      const text = new URLSearchParams({ campaign_uid: uid }).toString();
      const answer = await apiFor("readonly").send("POST", LIFECYCLE_PATHS.pause, { kind: "raw", text, contentType });
      expect(answer.status).toBe(400);
      expect(messageOf(answer)).toBe(
        "body: must be JSON (application/json), not application/x-www-form-urlencoded; only update campaign and create email sequence take form bodies",
      );
      expect(await read("readonly", uid)).toEqual(before);
    },
  );

  it.each(["start", "pause", "resume", "cancel"] as const)("%s with malformed JSON answers 400", async (operation) => {
    const answer = await apiFor("readonly").send("POST", LIFECYCLE_PATHS[operation], { kind: "raw", text: '{"campaign_uid":', contentType: "application/json" });
    expect(answer.status).toBe(400);
    messageOf(answer);
  });
});
