import { beforeAll, describe, expect, it } from "vitest";
import type * as resources from "../../src/upstream/resources.ts";
import { Api, snapshotAccount, useEmulator, type AccountSnapshot } from "../support/emulator.ts";

/**
 * Contacts are shared by leads of several campaigns of a workspace. The
 * generator played each campaign's past one campaign at a time (in generation
 * order, not in time order), and the simulation sent each day campaign by
 * campaign: a bounce met while playing one campaign stopped another's emails
 * dated weeks before it (`cancelled` with no cause yet), and a bounce dated
 * earlier did not stop emails a campaign played before sent to that contact
 * weeks after it. The emulator's own rule: `cancelled` means the contact
 * bounced or unsubscribed earlier, and no email goes to a bounced contact.
 */

const emulator = useEmulator({ apiKeys: ["a"], seed: 5 });
let snapshot: AccountSnapshot;

interface Use {
  campaign: resources.Campaign;
  lead: resources.Lead;
}

function usesByContact(): Map<number, Use[]> {
  const uses = new Map<number, Use[]>();
  for (const data of snapshot.campaigns) {
    for (const lead of data.leads) {
      const list = uses.get(lead.contact.id) ?? [];
      list.push({ campaign: data.campaign, lead });
      uses.set(lead.contact.id, list);
    }
  }
  return uses;
}

function firstBounce(uses: Use[]): number {
  const times = uses.flatMap(({ lead }) => lead.schedules.filter((s) => s.status === "bounced" && s.sent_on !== null).map((s) => Date.parse(s.sent_on as string)));
  return times.length > 0 ? Math.min(...times) : Number.POSITIVE_INFINITY;
}

describe.each([
  ["in the generated past", 0],
  ["after 30 days of simulation", 30 * 86_400],
])("a contact shared by several campaigns, %s", (_when, seconds) => {
  beforeAll(async () => {
    emulator().advance(seconds);
    snapshot = await snapshotAccount(new Api(emulator().url, "a"));
  });

  it("is never sent to after it bounced", () => {
    const violations: string[] = [];
    for (const [contact, uses] of usesByContact()) {
      const bounce = firstBounce(uses);
      for (const { campaign, lead } of uses) {
        for (const schedule of lead.schedules) {
          if (schedule.sent_on !== null && Date.parse(schedule.sent_on) > bounce) {
            violations.push(`contact ${contact}: ${campaign.uid} (${campaign.status}) sent schedule ${schedule.id} at ${schedule.sent_on}, after the contact bounced at ${new Date(bounce).toISOString()}`);
          }
        }
      }
    }
    expect(violations).toEqual([]);
  });

  it("has no email stopped for a bounce that had not happened yet", () => {
    const violations: string[] = [];
    for (const [contact, uses] of usesByContact()) {
      const bounce = firstBounce(uses);
      for (const { campaign, lead } of uses) {
        // Campaign-level stops (cancelled, failed) and unsubscribes are other causes; only a bounce is left.
        if (campaign.status === "cancelled" || campaign.status === "failed" || lead.contact.unsubscribed) continue;
        for (const schedule of lead.schedules) {
          if (schedule.status === "cancelled" && Date.parse(schedule.schedule_datetime) < bounce) {
            violations.push(
              `contact ${contact}: ${campaign.uid} (${campaign.status}) schedule ${schedule.id} planned ${schedule.schedule_datetime} is cancelled, but the contact first bounced at ${Number.isFinite(bounce) ? new Date(bounce).toISOString() : "never"}`,
            );
          }
        }
      }
    }
    expect(violations).toEqual([]);
  });
});
