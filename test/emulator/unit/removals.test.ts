import { describe, expect, it } from "vitest";
import { arriveSubMillisecondEvents } from "../../../src/emulator/arrivals.ts";
import { deleteCampaignIfIdle, deleteDomainIfUnused } from "../../../src/emulator/deletions.ts";
import { Random } from "../../../src/emulator/random.ts";
import type { LeadRecord } from "../../../src/emulator/store/model.ts";
import { removeContactList, removeLead, removeOpen } from "../../../src/emulator/store/removals.ts";
import { renderLead, renderOpenEvent } from "../../../src/emulator/store/render.ts";
import { groundTruth } from "../../../src/emulator/store/truth.ts";
import { accountOf, campaignIn, seeded } from "./world.ts";

/** Records deleted upstream take what belongs to them along, and nothing that others still use. */

describe("removals", () => {
  it("a deleted lead takes its schedules, opens, clicks and replies; its contact stays while another lead uses it", () => {
    const world = seeded(7);
    const account = accountOf(world);
    const leads = account.campaigns.items.flatMap((campaign) => campaign.leads.items);
    const users = new Map<number, LeadRecord[]>();
    for (const lead of leads) users.set(lead.contact.id, [...(users.get(lead.contact.id) ?? []), lead]);
    const active = (lead: LeadRecord) => lead.schedules.some((schedule) => schedule.openCount > 0 && (schedule.replies?.length ?? 0) > 0);
    const shared = leads.find((lead) => (users.get(lead.contact.id)?.length ?? 0) > 1 && active(lead));
    const alone = leads.find((lead) => users.get(lead.contact.id)?.length === 1 && active(lead) && lead !== shared);
    if (!shared || !alone) throw new Error("the seed has no engaged lead with a shared contact, or none with its own");
    const before = groundTruth(world, account);
    for (const lead of [shared, alone]) expect(removeLead(account, lead)).toBe(true);
    const after = groundTruth(world, account);
    expect(after.keys.leads).not.toContain(world.leadUid(shared));
    expect(after.keys.contacts).toContain(String(shared.contact.id));
    expect(after.keys.contacts).not.toContain(String(alone.contact.id));
    const gone = [shared, alone].flatMap((lead) => lead.schedules);
    for (const schedule of gone) {
      expect(after.keys.schedules).not.toContain(String(schedule.id));
      for (const reply of schedule.replies ?? []) expect(after.keys.replies).not.toContain(String(reply.id));
      expect(after.keys.email_opens.some((key) => key.startsWith(`${schedule.id}|`))).toBe(false);
      expect(after.keys.link_clicks.some((key) => key.startsWith(`${schedule.id}|`))).toBe(false);
    }
    expect(after.counts.email_opens).toBeLessThan(before.counts.email_opens);
    expect(account.pending.some((event) => gone.includes(event.schedule))).toBe(false);
    expect(removeLead(account, shared)).toBe(false);
  });

  it("a deleted open updates its schedule's count, first and last open; one of two sub-millisecond opens leaves the other first", () => {
    const world = seeded(7);
    const account = accountOf(world);
    const campaign = campaignIn(account, "complete", (candidate) => candidate.opens.length > 0);
    const random = new Random(1);
    let added = false;
    for (let attempt = 0; attempt < 20 && !added; attempt++) added = arriveSubMillisecondEvents(world, campaign, "open", random);
    expect(added).toBe(true);
    const precise = campaign.opens.items.filter((open) => open.micros !== undefined);
    expect(precise).toHaveLength(2);
    const [earlier, later] = precise as [(typeof precise)[0], (typeof precise)[0]];
    const schedule = earlier.schedule;
    const count = schedule.openCount;
    expect(renderOpenEvent(earlier).opened_on).toMatch(/\.\d{6}Z$/);
    expect(removeOpen(earlier)).toBe(true);
    expect(schedule.openCount).toBe(count - 1);
    const rendered = renderLead(world, schedule.lead).schedules.find((candidate) => candidate.id === schedule.id);
    const remaining = campaign.opens.items.filter((open) => open.schedule === schedule).map((open) => renderOpenEvent(open).opened_on);
    expect(rendered?.email_opened_on).toBe(remaining[0]);
    expect(remaining).toContain(renderOpenEvent(later).opened_on);
    expect(schedule.lastOpenedOn).toBe(campaign.opens.items.filter((open) => open.schedule === schedule).at(-1)?.openedOn);
  });

  it("campaigns go only when idle, domains only when no campaign sends from them, contact lists leave the campaigns that selected them", () => {
    const world = seeded(8);
    const account = accountOf(world);
    expect(deleteCampaignIfIdle(account, campaignIn(account, "running"))).toBe(false);
    const complete = campaignIn(account, "complete");
    expect(deleteCampaignIfIdle(account, complete)).toBe(true);
    expect(groundTruth(world, account).keys.campaigns).not.toContain(complete.uid);
    expect(account.campaignsByUid.has(complete.uid)).toBe(false);
    const used = new Set(account.campaigns.items.flatMap((campaign) => campaign.settings.sending_domains));
    const usedDomain = account.domains.items.find((domain) => used.has(domain.id));
    const unusedDomain = account.domains.items.find((domain) => !used.has(domain.id));
    if (!usedDomain || !unusedDomain) throw new Error("the seed needs a used and an unused domain");
    expect(deleteDomainIfUnused(account, usedDomain)).toBe(false);
    expect(deleteDomainIfUnused(account, unusedDomain)).toBe(true);
    expect(unusedDomain.workspace.domains.items).not.toContain(unusedDomain);
    const selected = account.campaigns.items.flatMap((campaign) => campaign.contactLists)[0];
    if (!selected) throw new Error("no campaign selects a contact list");
    expect(removeContactList(account, selected)).toBe(true);
    expect(account.campaigns.items.some((campaign) => campaign.contactLists.includes(selected))).toBe(false);
    expect(groundTruth(world, account).keys.contact_lists).not.toContain(selected.uid);
  });
});
