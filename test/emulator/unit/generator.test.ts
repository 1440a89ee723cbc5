import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { emailContentType, replyClassification, schedulingStrategy, sequenceLabel } from "../../../src/upstream/enums.ts";
import { isIanaTimeZone, updateDataSchema } from "../../../src/upstream/requests.ts";
import * as resources from "../../../src/upstream/resources.ts";
import { TIME_ZONES } from "../../../src/emulator/seed/vocabulary.ts";
import { SCHEDULE_STATUSES } from "../../../src/emulator/store/model.ts";
import {
  renderCampaign,
  renderClickEvent,
  renderContactList,
  renderDomain,
  renderLead,
  renderOpenEvent,
  renderReply,
  renderSequence,
  renderWorkspace,
} from "../../../src/emulator/store/render.ts";
import { groundTruth } from "../../../src/emulator/store/truth.ts";
import type { Account, World } from "../../../src/emulator/store/world.ts";
import { accountOf, allSchedules, schedulesOf, seeded } from "./world.ts";

/** The generator: same seed, same bytes; and the data holds together the way the API promises. */

function everything(world: World, account: Account): string {
  return JSON.stringify({
    workspaces: account.workspaces.items.map(renderWorkspace),
    domains: account.domains.items.map(renderDomain),
    lists: account.contactLists.items.map(renderContactList),
    campaigns: account.campaigns.items.map((campaign) => ({
      campaign: renderCampaign(campaign),
      sequences: campaign.sequences.map(renderSequence),
      leads: campaign.leads.items.map((lead) => renderLead(world, lead)),
      replies: campaign.replies.items.map(renderReply),
      clicks: campaign.clicks.items.map(renderClickEvent),
      opens: campaign.opens.items.map(renderOpenEvent),
    })),
  });
}

describe("determinism", () => {
  it("the same seed renders the same bytes, for every account", () => {
    const [left, right] = [seeded(11, ["a", "b"]), seeded(11, ["a", "b"])];
    for (const key of ["a", "b"]) expect(everything(right, accountOf(right, key))).toBe(everything(left, accountOf(left, key)));
  });

  it("another seed, or another account of one seed, renders other data", () => {
    const world = seeded(11, ["a", "b"]);
    const other = seeded(12, ["a", "b"]);
    expect(everything(other, accountOf(other))).not.toBe(everything(world, accountOf(world)));
    expect(everything(world, accountOf(world, "b"))).not.toBe(everything(world, accountOf(world, "a")));
  });
});

describe.each([1, 2, 3])("seed %i, small scale", (seed) => {
  const world = seeded(seed, ["a", "b"]);
  const account = accountOf(world);
  const campaigns = account.campaigns.items;

  it("every record renders to its upstream schema", () => {
    const check = <S extends z.ZodType>(schema: S, records: unknown[]) => {
      for (const record of records) expect(schema.safeParse(record).success, JSON.stringify(record).slice(0, 300)).toBe(true);
    };
    check(resources.workspace, account.workspaces.items.map(renderWorkspace));
    check(resources.domain, account.domains.items.map(renderDomain));
    check(resources.contactList, account.contactLists.items.map(renderContactList));
    check(resources.campaign, campaigns.map(renderCampaign));
    check(resources.emailSequence, campaigns.flatMap((campaign) => campaign.sequences.map(renderSequence)));
    check(resources.lead, campaigns.flatMap((campaign) => campaign.leads.items.map((lead) => renderLead(world, lead))));
    check(resources.reply, campaigns.flatMap((campaign) => campaign.replies.items.map(renderReply)));
  });

  it("has every campaign status, and created campaigns with 0, 1 and several sequences", () => {
    expect(new Set(campaigns.map((campaign) => campaign.status)).size).toBe(8);
    const created = campaigns.filter((campaign) => campaign.status === "created").map((campaign) => campaign.sequences.length);
    expect(created).toContain(0);
    expect(created).toContain(1);
    expect(created.some((count) => count >= 2)).toBe(true);
  });

  it("covers every enum value", () => {
    const sequences = campaigns.flatMap((campaign) => campaign.sequences);
    const discoverable = new Set(allSchedules(account).map((schedule) => schedule.sequence));
    expect(new Set(campaigns.map((campaign) => campaign.settings.scheduling_strategy))).toEqual(new Set(schedulingStrategy.options));
    expect(new Set(sequences.filter((sequence) => discoverable.has(sequence)).map((sequence) => sequence.label))).toEqual(new Set(sequenceLabel.options));
    expect(new Set(sequences.filter((sequence) => discoverable.has(sequence)).map((sequence) => sequence.contentType))).toEqual(
      new Set(emailContentType.options),
    );
    expect(new Set(campaigns.flatMap((campaign) => campaign.replies.items.map((reply) => reply.classification)))).toEqual(new Set(replyClassification.options));
    expect(new Set(allSchedules(account).map((schedule) => schedule.status))).toEqual(new Set(SCHEDULE_STATUSES));
  });

  it("campaigns in created (or creating, on their way there) carry settings a client can send back unchanged", () => {
    const domains = new Set(account.domains.items.map((domain) => domain.id));
    for (const campaign of campaigns.filter((candidate) => candidate.status === "created" || candidate.status === "creating")) {
      expect(updateDataSchema("json").safeParse(campaign.settings).success, campaign.uid).toBe(true);
      expect(campaign.settings.scheduling_strategy === "single-message").toBe(campaign.sequences.length === 1);
      expect(campaign.settings.sending_domains.every((id) => domains.has(id))).toBe(true);
    }
  });

  it("writes only IANA zone names, for workspaces and campaigns alike", () => {
    const zones = [...account.workspaces.items.map((workspace) => workspace.timeZone), ...campaigns.map((campaign) => campaign.settings.time_zone)];
    for (const zone of new Set([...TIME_ZONES, ...zones])) if (zone !== null) expect(isIanaTimeZone(zone), zone).toBe(true);
  });

  it("each schedule's opens number its email_open_count, and email_opened_on is the first of them", () => {
    for (const campaign of campaigns) {
      const opens = new Map<number, number[]>();
      for (const open of campaign.opens.items) opens.set(open.schedule.id, [...(opens.get(open.schedule.id) ?? []), open.openedOn]);
      for (const schedule of schedulesOf(campaign)) {
        const times = opens.get(schedule.id) ?? [];
        expect(times.length).toBe(schedule.openCount);
        expect(schedule.firstOpenedOn).toBe(times.length > 0 ? Math.min(...times) : null);
        expect(new Set(times).size).toBe(times.length);
      }
    }
  });

  it("replies and clicks in the campaign listings are exactly those nested in its schedules", () => {
    for (const campaign of campaigns) {
      const nestedReplies = schedulesOf(campaign).flatMap((schedule) => schedule.replies ?? []);
      const nestedClicks = schedulesOf(campaign).flatMap((schedule) => schedule.clicks ?? []);
      expect(new Set(campaign.replies.items)).toEqual(new Set(nestedReplies));
      expect(new Set(campaign.clicks.items)).toEqual(new Set(nestedClicks));
      for (const reply of campaign.replies.items) expect([...reply.subject].length).toBeLessThanOrEqual(500);
    }
  });

  it("activity follows its send and precedes now; unsent schedules have none", () => {
    for (const schedule of allSchedules(account)) {
      const times = [
        ...(schedule.clicks ?? []).map((click) => click.clickedOn),
        ...(schedule.replies ?? []).map((reply) => reply.receivedOn),
        ...(schedule.firstOpenedOn === null ? [] : [schedule.firstOpenedOn]),
      ];
      if (schedule.sentOn === null) {
        expect(times).toEqual([]);
        expect(["created", "cancelled"]).toContain(schedule.status);
        continue;
      }
      expect(schedule.sentOn).toBeLessThanOrEqual(world.now);
      for (const time of times) expect(time > schedule.sentOn && time <= world.now).toBe(true);
    }
  });

  it("opens, clicks and replies are listed in time order", () => {
    const ascending = (times: number[]) => [...times].sort((a, b) => a - b);
    for (const campaign of campaigns) {
      const opened = campaign.opens.items.map((open) => open.openedOn);
      const clicked = campaign.clicks.items.map((click) => click.clickedOn);
      const received = campaign.replies.items.map((reply) => reply.receivedOn);
      expect(opened).toEqual(ascending(opened));
      expect(clicked).toEqual(ascending(clicked));
      expect(received).toEqual(ascending(received));
    }
    for (const listing of ["opens", "clicks", "replies"] as const) expect(campaigns.some((campaign) => campaign[listing].length > 1), listing).toBe(true);
  });

  it("contacts are distinct within a campaign and some are shared between campaigns of a workspace", () => {
    const owners = new Map<number, Set<string>>();
    for (const campaign of campaigns) {
      const contacts = campaign.leads.items.map((lead) => lead.contact.id);
      expect(new Set(contacts).size).toBe(contacts.length);
      for (const id of contacts) owners.set(id, (owners.get(id) ?? new Set()).add(campaign.uid));
    }
    expect([...owners.values()].some((uids) => uids.size > 1)).toBe(true);
  });

  it("some sequence bodies are 10 to 20 KB of HTML", () => {
    const sizes = campaigns.flatMap((campaign) => campaign.sequences.filter((sequence) => sequence.contentType === "text/html").map((sequence) => Buffer.byteLength(sequence.body)));
    expect(sizes.some((size) => size >= 10_240 && size <= 20_480)).toBe(true);
  });

  it("ids and uids never repeat across accounts", () => {
    const b = accountOf(world, "b");
    const truthA = groundTruth(world, account);
    const truthB = groundTruth(world, b);
    for (const entity of ["workspaces", "domains", "contact_lists", "campaigns", "leads", "contacts", "schedules", "replies", "email_sequences"] as const) {
      const mine = new Set(truthA.keys[entity]);
      expect(truthB.keys[entity].filter((key) => mine.has(key)), entity).toEqual([]);
    }
  });

  it("the ground truth counts agree with its keys and with the store", () => {
    const truth = groundTruth(world, account);
    for (const [entity, keys] of Object.entries(truth.keys)) expect(truth.counts[entity as keyof typeof truth.counts]).toBe(keys.length);
    expect(truth.counts.leads).toBe(campaigns.reduce((sum, campaign) => sum + campaign.leads.length, 0));
    expect(truth.now).toBe("2026-06-01T00:00:00.000Z");
  });
});
