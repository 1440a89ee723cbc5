import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { removeLead } from "../../src/emulator/store/removals.ts";
import { TEST_KEY } from "../support/sync.ts";
import { diffWithTruth, warehouseKeys } from "../support/truth.ts";
import { cycle, useWorlds } from "../support/world-fixture.ts";

/** campaign_funnel once leads were removed upstream: the upstream's bounce count outlives them, the live schedules do not. */

const openWorld = useWorlds("funnel_after_removals");

describe("campaign_funnel.bounce_rate", () => {
  it("is NULL once the upstream's bounces outnumber the emails the live schedules sent (bounced leads removed upstream)", async () => {
    const f = await openWorld("removed_bounces");
    const campaign = f.account.campaigns.items.find((c) => c.bounces >= 2 && c.leads.items.length > 5)!;
    // Leads deleted upstream (the delete fault does this too): keep one lead whose email bounced, remove the others.
    const sentBy = (lead: (typeof campaign.leads.items)[number]) => lead.schedules.filter((s) => s.sentOn !== null).length;
    const bouncedLead = campaign.leads.items.filter((lead) => lead.schedules.some((s) => s.status === "bounced")).sort((a, b) => sentBy(a) - sentBy(b))[0]!;
    for (const lead of [...campaign.leads.items]) if (lead !== bouncedLead) removeLead(f.account, lead);
    await cycle(f, "all");
    await cycle(f, "all");
    expect(diffWithTruth(f.emulator.truth(TEST_KEY), await warehouseKeys(f.warehouse.db))).toEqual({});
    const { rows } = await sql<{ emails_sent: string; bounced: string; bounce_rate: string }>`
      SELECT emails_sent, bounced, bounce_rate FROM campaign_funnel WHERE campaign_uid = ${campaign.uid}`.execute(f.warehouse.db);
    const row = rows[0]!;
    expect(Number(row.emails_sent)).toBe(bouncedLead.schedules.filter((s) => s.sentOn !== null).length);
    // `bounced` is the upstream's count, which keeps the bounces of the leads removed: it counts other emails than
    // emails_sent does, and a rate of one over the other (200 % here) would mean nothing.
    expect(Number(row.bounced)).toBe(campaign.bounces);
    expect(Number(row.bounced)).toBeGreaterThan(Number(row.emails_sent));
    expect(row.bounce_rate).toBeNull();
  }, 120_000);
});
