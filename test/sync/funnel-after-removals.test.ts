import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { removeLead } from "../../src/emulator/store/removals.ts";
import { TEST_KEY } from "../support/sync.ts";
import { diffWithTruth, warehouseKeys } from "../support/truth.ts";
import { cycle, useWorlds } from "../support/world-fixture.ts";

/** campaign_funnel once leads were removed upstream: the upstream's bounce count outlives them, the live schedules do not. */

const openWorld = useWorlds("funnel_after_removals");

describe("campaign_funnel.bounce_rate", () => {
  it("is over every email the campaign was seen to send once bounced leads are removed upstream, and NULL when the upstream counts more", async () => {
    const f = await openWorld("removed_bounces");
    const campaign = f.account.campaigns.items.find((c) => c.bounces >= 2 && c.leads.items.length > 5)!;
    const sentBy = (lead: (typeof campaign.leads.items)[number]) => lead.schedules.filter((s) => s.sentOn !== null).length;
    // The warehouse sees every email the campaign sent before any lead is removed.
    await cycle(f, "all");
    const sentEver = campaign.leads.items.reduce((sum, lead) => sum + sentBy(lead), 0);
    // Leads deleted upstream (the delete fault does this too): keep one lead whose email bounced, remove the others.
    const bouncedLead = campaign.leads.items.filter((lead) => lead.schedules.some((s) => s.status === "bounced")).sort((a, b) => sentBy(a) - sentBy(b))[0]!;
    for (const lead of [...campaign.leads.items]) if (lead !== bouncedLead) removeLead(f.account, lead);
    await cycle(f, "all");
    await cycle(f, "all");
    expect(diffWithTruth(f.emulator.truth(TEST_KEY), await warehouseKeys(f.warehouse.db))).toEqual({});
    const funnel = async () => {
      const { rows } = await sql<{ emails_sent: string; bounced: string; bounce_rate: string | null }>`
        SELECT emails_sent, bounced, bounce_rate FROM campaign_funnel WHERE campaign_uid = ${campaign.uid}`.execute(f.warehouse.db);
      return rows[0]!;
    };
    const row = await funnel();
    expect(Number(row.emails_sent)).toBe(sentBy(bouncedLead));
    // `bounced` is the upstream's count, which keeps the removed leads' bounces: over the live schedules' emails alone
    // (one, here) it would read 200 %; over every email the campaign sent it is the campaign's bounce rate.
    expect(Number(row.bounced)).toBe(campaign.bounces);
    expect(Number(row.bounce_rate)).toBeCloseTo(campaign.bounces / sentEver, 4);

    // An upstream that counts more bounces than the emails the warehouse saw sent: no rate can be told.
    await sql`UPDATE campaigns SET bounces = ${sentEver + 1} WHERE uid = ${campaign.uid}`.execute(f.warehouse.db);
    expect((await funnel()).bounce_rate).toBeNull();
    await sql`UPDATE campaigns SET bounces = ${sentEver} WHERE uid = ${campaign.uid}`.execute(f.warehouse.db);
    expect(Number((await funnel()).bounce_rate)).toBe(1);
  }, 120_000);
});
