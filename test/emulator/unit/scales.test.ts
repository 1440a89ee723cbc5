import { describe, expect, it } from "vitest";
import { advance } from "../../../src/emulator/simulate.ts";
import { accountOf, seeded } from "./world.ts";

/**
 * Volumes of the bigger scales. Generation time is not asserted here (see
 * the "emulator: data generated" log line, which carries the milliseconds);
 * these only check that the promised volumes are there.
 */

describe("scales", () => {
  it("medium: about 30 campaigns and 20,000 leads per account", () => {
    const account = accountOf(seeded(1, ["a"], "medium"));
    const leads = account.campaigns.items.reduce((sum, campaign) => sum + campaign.leads.length, 0);
    expect(account.campaigns.length).toBe(30);
    expect(leads).toBeGreaterThanOrEqual(18_000);
    expect(leads).toBeLessThanOrEqual(22_000);
  });

  it("large: at least 100 campaigns and 200,000 leads per account, in every status", () => {
    const account = accountOf(seeded(1, ["a"], "large"));
    const leads = account.campaigns.items.reduce((sum, campaign) => sum + campaign.leads.length, 0);
    expect(account.campaigns.length).toBeGreaterThanOrEqual(100);
    expect(leads).toBeGreaterThanOrEqual(200_000);
    expect(new Set(account.campaigns.items.map((campaign) => campaign.status)).size).toBe(8);
  });

  it("busy: at least 30 running campaigns of 50-150 leads, sending every day around the clock", () => {
    const account = accountOf(seeded(1, ["a"], "busy"));
    const running = account.campaigns.items.filter((campaign) => campaign.status === "running");
    expect(running.length).toBeGreaterThanOrEqual(30);
    expect(new Set(account.campaigns.items.map((campaign) => campaign.status)).size).toBe(8);
    for (const campaign of running) {
      expect(campaign.leads.length).toBeGreaterThanOrEqual(50);
      expect(campaign.leads.length).toBeLessThanOrEqual(150);
      expect(campaign.settings).toMatchObject({ from_time: "00:00:00", to_time: "23:59:59", skip_days: [] });
    }
  });

  it.each([1, 5, 7])("busy, seed %i: opens, clicks and replies keep arriving from the first simulated minutes on", (seed) => {
    const world = seeded(seed, ["a"], "busy");
    const minutes = (count: number) => {
      const report = advance(world, count * 60);
      return (report.created.email_opens ?? 0) + (report.created.link_clicks ?? 0) + (report.created.replies ?? 0);
    };
    // About 1.5 a minute over the first hours (README); every quarter of an hour meets several.
    for (let quarter = 0; quarter < 4; quarter++) expect(minutes(15)).toBeGreaterThanOrEqual(8);
    const hour = advance(world, 3_600);
    expect(hour.created.replies ?? 0).toBeGreaterThanOrEqual(5);
    expect(hour.created.link_clicks ?? 0).toBeGreaterThanOrEqual(5);
  });
});
