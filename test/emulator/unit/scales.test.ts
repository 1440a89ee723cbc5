import { describe, expect, it } from "vitest";
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
});
