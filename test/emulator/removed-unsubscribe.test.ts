import { describe, expect, it } from "vitest";
import { seedWorld } from "../../src/emulator/seed/generate.ts";
import { removeCampaign, removeLead } from "../../src/emulator/store/removals.ts";
import { World } from "../../src/emulator/store/world.ts";

/**
 * A contact's planned unsubscribe stops its later emails in every campaign (activity.ts). When the lead or the
 * campaign whose email planned it is removed, its planned activity goes, and so must the stop: the contact's
 * emails in other campaigns were cancelled for an unsubscribe that never came.
 */

/** A seeded account where one sent email planned its contact's unsubscribe an hour from now, as activity.ts plans one. */
function plannedUnsubscribe() {
  const world = new World(11);
  seedWorld(world, ["k"], "small");
  const account = world.accounts.get("k");
  const schedule = account?.campaigns.items.flatMap((campaign) => campaign.leads.items.flatMap((lead) => lead.schedules)).find((candidate) => candidate.sentOn !== null);
  if (!account || !schedule) throw new Error("the seed has no sent email");
  const at = world.now + 3_600_000;
  schedule.lead.contact.unsubscribesAt = at;
  account.pending.push({ kind: "unsubscribe", at, schedule });
  return { account, schedule };
}

describe("a planned unsubscribe whose lead or campaign is removed", () => {
  it.each(["lead", "campaign"] as const)("no longer stops the contact's emails once its %s is gone", (removed) => {
    const { account, schedule } = plannedUnsubscribe();
    if (removed === "lead") removeLead(account, schedule.lead);
    else removeCampaign(account, schedule.lead.campaign);
    expect(schedule.lead.contact.unsubscribesAt).toBeUndefined();
    expect(account.pending.some((event) => event.schedule === schedule)).toBe(false);
  });
});
