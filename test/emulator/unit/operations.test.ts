import { describe, expect, it } from "vitest";
import { assessSequence } from "../../../src/emulator/content.ts";
import { applyLifecycle, createSequence, deleteSequence } from "../../../src/emulator/operations.ts";
import { advance } from "../../../src/emulator/simulate.ts";
import { groundTruth } from "../../../src/emulator/store/truth.ts";
import { accountOf, campaignIn, schedulesOf, seeded } from "./world.ts";

/** Write operations on the store: lifecycle effects and sequence changes. */

describe("lifecycle", () => {
  it("start plans every schedule from now and the campaign sends from then on", () => {
    const world = seeded(21);
    const campaign = campaignIn(accountOf(world), "created", (candidate) => candidate.sequences.length >= 1);
    applyLifecycle(world, campaign, "start");
    expect(campaign.status).toBe("running");
    expect(campaign.startedRunningAt).toBe(world.now);
    expect(schedulesOf(campaign).every((schedule) => schedule.at >= world.now)).toBe(true);
    advance(world, 7 * 86_400);
    expect(schedulesOf(campaign).some((schedule) => schedule.sentOn !== null)).toBe(true);
  });

  it("pause stops sending and resume starts again", () => {
    const world = seeded(22);
    const campaign = campaignIn(accountOf(world), "running", (candidate) => schedulesOf(candidate).some((schedule) => schedule.status === "created"));
    applyLifecycle(world, campaign, "pause");
    expect([campaign.status, campaign.paused, campaign.pausedOn]).toEqual(["paused", true, world.now]);
    const sent = () => schedulesOf(campaign).filter((schedule) => schedule.sentOn !== null).length;
    const before = sent();
    advance(world, 3 * 86_400);
    expect(sent()).toBe(before);
    applyLifecycle(world, campaign, "resume");
    expect([campaign.status, campaign.paused]).toEqual(["running", false]);
    advance(world, 30 * 86_400);
    expect(sent()).toBeGreaterThan(before);
  });

  it("cancel stops every unsent schedule and keeps the rest", () => {
    const world = seeded(23);
    const campaign = campaignIn(accountOf(world), "running", (candidate) => schedulesOf(candidate).some((schedule) => schedule.status === "created"));
    const sentIds = schedulesOf(campaign).filter((schedule) => schedule.sentOn !== null).map((schedule) => schedule.id);
    applyLifecycle(world, campaign, "cancel");
    expect(campaign.status).toBe("cancelled");
    expect(campaign.cancelledAt).toBe(world.now);
    expect(schedulesOf(campaign).filter((schedule) => schedule.sentOn === null).every((schedule) => schedule.status === "cancelled")).toBe(true);
    advance(world, 30 * 86_400);
    expect(schedulesOf(campaign).filter((schedule) => schedule.sentOn !== null).map((schedule) => schedule.id)).toEqual(sentIds);
  });
});

describe("email sequences", () => {
  it("a new sequence gives every lead a schedule for it, in sequence order, and deleting it takes them away", () => {
    const world = seeded(24);
    const account = accountOf(world);
    const campaign = campaignIn(account, "created", (candidate) => candidate.sequences.length >= 2 && candidate.leads.length > 0);
    const count = campaign.sequences.length;
    const sequence = createSequence(world, account, campaign, { order: -5, subject: "Hello", body: "<p>Hi</p>", next_message_days: 2 });
    expect(campaign.sequences[0]).toBe(sequence);
    for (const lead of campaign.leads.items) {
      expect(lead.schedules.map((schedule) => schedule.sequence)).toEqual(campaign.sequences);
      expect(lead.schedules.every((schedule, index) => index === 0 || schedule.at >= (lead.schedules[index - 1]?.at ?? 0))).toBe(true);
    }
    expect(groundTruth(world, account).keys.email_sequences).toContain(String(sequence.id));
    deleteSequence(world, account, sequence);
    expect(campaign.sequences.length).toBe(count);
    expect(campaign.leads.items.every((lead) => lead.schedules.length === count)).toBe(true);
    expect(account.sequencesById.has(sequence.id)).toBe(false);
    expect(groundTruth(world, account).keys.email_sequences).not.toContain(String(sequence.id));
  });

  it("scores content, detects HTML and blocks forbidden phrases", () => {
    const plain = assessSequence("Quick question", "Hi there,\nwould a short call next week make sense for your team?");
    expect(plain).toMatchObject({ contentType: "text/plain", label: "passed", blockedReason: "" });
    expect(plain.score).toBeGreaterThanOrEqual(80);
    expect(assessSequence("Hi", "<p>Hello <b>there</b></p>").contentType).toBe("text/html");
    expect(assessSequence("Hi", "2 < 3 and 5 > 4").contentType).toBe("text/plain");
    const spam = assessSequence("FREE winner!!! act now", "Click here: 100% free casino bonus https://a.example https://b.example https://c.example https://d.example");
    expect(spam.label).toBe("blocked");
    expect(spam.blockedReason).toContain("casino");
    expect(spam.score).toBeLessThan(plain.score);
  });
});
