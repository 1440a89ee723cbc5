import { describe, expect, it } from "vitest";
import type { TruthEntity } from "../../../src/emulator/options.ts";
import { advance } from "../../../src/emulator/simulate.ts";
import { groundTruth } from "../../../src/emulator/store/truth.ts";
import { TERMINAL_CAMPAIGN_STATUSES } from "../../../src/upstream/enums.ts";
import { accountOf, allSchedules, campaignIn, schedulesOf, seeded } from "./world.ts";

/** The simulated clock: what advance() changes, and that the ground truth follows. */

const DAY = 86_400;

describe("advance", () => {
  it("by zero seconds changes nothing", () => {
    const world = seeded(4);
    const before = groundTruth(world, accountOf(world));
    expect(advance(world, 0)).toEqual({ now: before.now, created: {}, changed: {} });
    expect(groundTruth(world, accountOf(world))).toEqual(before);
  });

  it("reports as created exactly what the ground truth gained, and never loses a record of the growing entities", () => {
    const world = seeded(4);
    const account = accountOf(world);
    const before = groundTruth(world, account);
    const report = advance(world, 3 * DAY);
    const after = groundTruth(world, account);
    expect(Date.parse(after.now) - Date.parse(before.now)).toBe(3 * DAY * 1000);
    const growing: TruthEntity[] = ["leads", "contacts", "schedules", "replies", "link_clicks", "email_opens"];
    for (const entity of growing) {
      expect(report.created[entity] ?? 0, entity).toBe(after.counts[entity] - before.counts[entity]);
      const now = new Set(after.keys[entity]);
      expect(before.keys[entity].filter((key) => !now.has(key)), entity).toEqual([]);
    }
    expect(report.created.email_opens ?? 0).toBeGreaterThan(0);
  });

  it("dates what it sends inside the advanced window", () => {
    const world = seeded(5);
    const account = accountOf(world);
    const from = world.now;
    const unsent = new Set(allSchedules(account).filter((schedule) => schedule.sentOn === null));
    advance(world, 2 * DAY);
    const sent = allSchedules(account).filter((schedule) => unsent.has(schedule) && schedule.sentOn !== null);
    expect(sent.length).toBeGreaterThan(0);
    for (const schedule of sent) expect((schedule.sentOn ?? 0) > from && (schedule.sentOn ?? 0) <= world.now).toBe(true);
  });

  it("generates the schedules of campaigns in creating, and starts scheduled campaigns at their planned start", () => {
    const world = seeded(6);
    const account = accountOf(world);
    const creating = campaignIn(account, "creating");
    const scheduled = account.campaigns.items.filter((campaign) => campaign.status === "scheduled");
    advance(world, 8 * DAY);
    expect(creating.status).toBe("created");
    expect(creating.generatingSchedules).toBe(false);
    expect(creating.leads.items.every((lead) => lead.schedules.length === creating.sequences.length)).toBe(true);
    for (const campaign of scheduled) {
      expect(campaign.status).not.toBe("scheduled");
      expect(campaign.startedRunningAt).toBe(campaign.scheduledStart);
    }
  });

  it("leaves paused and terminal campaigns quiet, and completes running ones once everything is sent", () => {
    const world = seeded(7);
    const account = accountOf(world);
    const quiet = account.campaigns.items.filter((campaign) => campaign.status === "paused" || TERMINAL_CAMPAIGN_STATUSES.includes(campaign.status));
    const sentBefore = new Map(quiet.map((campaign) => [campaign, schedulesOf(campaign).filter((schedule) => schedule.sentOn !== null).length]));
    advance(world, 120 * DAY);
    for (const campaign of quiet) expect(schedulesOf(campaign).filter((schedule) => schedule.sentOn !== null).length).toBe(sentBefore.get(campaign));
    expect(account.campaigns.items.filter((campaign) => campaign.status === "running")).toEqual([]);
    for (const campaign of account.campaigns.items.filter((candidate) => candidate.status === "complete")) {
      expect(campaign.completedAt).not.toBeNull();
      expect(schedulesOf(campaign).some((schedule) => schedule.status === "created")).toBe(false);
    }
  });

  it("counts sends and replies on the workspaces", () => {
    const world = seeded(8);
    const account = accountOf(world);
    const totals = () => account.workspaces.items.reduce((sum, workspace) => sum + workspace.totalEmailsSent, 0);
    const sentCount = () => allSchedules(account).filter((schedule) => schedule.sentOn !== null).length;
    const [totalBefore, sentBefore] = [totals(), sentCount()];
    advance(world, 5 * DAY);
    expect(totals() - totalBefore).toBe(sentCount() - sentBefore);
  });

  it("removes a domain from the listing an hour after its deletion started", () => {
    const world = seeded(9);
    const account = accountOf(world);
    const deleting = account.domains.items.find((domain) => domain.status === "deleting");
    if (!deleting) throw new Error("the seed has no domain being deleted");
    expect(deleting.deletionStartedOn).not.toBeNull();
    advance(world, 3600);
    expect(account.domains.items).not.toContain(deleting);
    expect(deleting.workspace.domains.items).not.toContain(deleting);
    expect(groundTruth(world, account).keys.domains).not.toContain(String(deleting.id));
  });

  it("plays the same future for the same seed", () => {
    const [left, right] = [seeded(10), seeded(10)];
    expect(advance(right, 2 * DAY)).toEqual(advance(left, 2 * DAY));
    expect(groundTruth(right, accountOf(right))).toEqual(groundTruth(left, accountOf(left)));
  });
});
