import { beforeAll, describe, expect, it } from "vitest";
import { PATHS } from "../../src/upstream/endpoints.ts";
import * as resources from "../../src/upstream/resources.ts";
import { Api, listWorkspaces, useEmulator, type Query } from "../support/emulator.ts";
import { firstDecrease, instantMicros } from "./instants.ts";

/**
 * Conformance findings: fields the spec shows as values are values, and listings without an explicit
 * order come in ascending creation order (contract A.3), also after records arrived later.
 */

const emulator = useEmulator({ apiKeys: ["a"], seed: 23 });
let api: Api;

beforeAll(() => {
  api = new Api(emulator().url, "a");
});

describe("next_renewal_date (spec 2.13: a date-time)", () => {
  it("is a date-time in the future for every workspace, free plans included, and stays one as time passes", async () => {
    for (const step of [0, 40 * 86_400, 400 * 86_400]) {
      emulator().advance(step);
      const now = Date.parse(emulator().truth("a").now);
      const workspaces = await listWorkspaces(api);
      expect(workspaces.some((workspace) => workspace.subscription_plan === "free")).toBe(true);
      for (const workspace of workspaces) {
        expect(workspace.next_renewal_date, `workspace ${workspace.id} (${workspace.subscription_plan})`).toEqual(expect.any(String));
        expect(resources.dateTime.safeParse(workspace.next_renewal_date).success).toBe(true);
        expect(Date.parse(workspace.next_renewal_date as string)).toBeGreaterThan(now);
      }
    }
  });
});

interface Timed {
  name: string;
  path: string;
  query: Query;
  time: (record: Record<string, unknown>) => string;
}

async function timedListings(): Promise<Timed[]> {
  const workspaces = await listWorkspaces(api);
  const campaigns = await api.walk(PATHS.campaigns, {}, resources.campaignListItem);
  const listings: Timed[] = [
    { name: "campaigns", path: PATHS.campaigns, query: {}, time: (record) => record.created_on as string },
    { name: "domains", path: PATHS.domains, query: {}, time: (record) => record.created_on as string },
    { name: "contact lists", path: PATHS.contacts, query: {}, time: (record) => record.created_on as string },
  ];
  for (const workspace of workspaces) {
    for (const listing of listings.slice(0, 3)) listings.push({ ...listing, name: `${listing.name} of workspace ${workspace.id}`, query: { workspace_id: workspace.id } });
  }
  for (const campaign of campaigns.records) {
    const byUid = { campaign_uid: campaign.uid };
    listings.push({ name: `clicks of ${campaign.uid}`, path: PATHS.linkClickEvents, query: byUid, time: (record) => record.clicked_on as string });
    listings.push({ name: `opens of ${campaign.uid}`, path: PATHS.emailOpenEvents, query: byUid, time: (record) => record.opened_on as string });
  }
  return listings;
}

/** Every listing's records in asc order, paired with the names of listings whose times decrease somewhere. */
async function decreasingListings(): Promise<string[]> {
  const problems: string[] = [];
  const check = (name: string, times: string[]) => {
    const at = firstDecrease(times.map(instantMicros));
    if (at !== undefined) problems.push(`${name}: ${times[at - 1]} then ${times[at]}`);
  };
  for (const listing of await timedListings()) {
    const { records } = await api.walk(listing.path, listing.query, resources.pageEnvelope.shape.data.element, 100);
    check(listing.name, records.map((record) => listing.time(record as Record<string, unknown>)));
  }
  check("workspaces", (await listWorkspaces(api)).map((workspace) => workspace.created_on));
  const campaigns = await api.walk(PATHS.campaigns, {}, resources.campaignListItem);
  for (const campaign of campaigns.records) {
    const replies = await api.ok(PATHS.replies, { campaign_uid: campaign.uid }, resources.reply.array());
    check(`replies of ${campaign.uid}`, replies.map((reply) => reply.received_on));
  }
  return problems;
}

describe("asc order is creation order (contract A.3)", () => {
  it("in the generated data: created_on, or the event time for events, never decreases in any listing", async () => {
    expect(await decreasingListings()).toEqual([]);
  });

  it("still after records arrived through faults and the simulated clock", async () => {
    const listings = await timedListings();
    const settings = emulator().settings;
    Object.assign(settings, { faults: "hostile", slowMs: 1 });
    try {
      // Page requests with hostile faults: records inserted, deleted and sub-millisecond events among them.
      for (let round = 0; round < 4; round++) {
        for (const listing of listings) await api.get(listing.path, { ...listing.query, limit: 5, offset: 3 }).catch(() => undefined);
      }
    } finally {
      settings.faults = "none";
    }
    emulator().advance(3 * 86_400);
    expect(await decreasingListings()).toEqual([]);
  }, 60_000);
});
