import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { PATHS } from "../../src/upstream/endpoints.ts";
import * as resources from "../../src/upstream/resources.ts";
import { Api, clickKey, messageOf, openKey, parseStrict, snapshotAccount, useEmulator, type AccountSnapshot, type Query } from "../support/emulator.ts";

/** Spec 4.1 and contract A.3: limit, offset, ordering, workspace filter and the two unpaginated shapes. */

// Seed 10 gives every listing at least six records, enough to tell a shuffled order from asc.
const emulator = useEmulator({ apiKeys: ["a"], seed: 10 });
let api: Api;
let seed: AccountSnapshot;

beforeAll(async () => {
  api = new Api(emulator().url, "a");
  seed = await snapshotAccount(api);
});

afterEach(() => {
  emulator().settings.order = "asc";
  emulator().settings.workspaces = "bare";
});

interface Listing {
  name: string;
  path: string;
  query: () => Query;
  schema: z.ZodType;
  key: (record: never) => string;
}

function busiest(count: (data: AccountSnapshot["campaigns"][number]) => number): string {
  const [top] = [...seed.campaigns].sort((x, y) => count(y) - count(x));
  if (!top || count(top) === 0) throw new Error("the seed has no campaign with such records");
  return top.summary.uid;
}

const listings: Listing[] = [
  { name: "campaigns", path: PATHS.campaigns, query: () => ({}), schema: resources.campaignListItem, key: (r: resources.CampaignListItem) => r.uid },
  { name: "domains", path: PATHS.domains, query: () => ({}), schema: resources.domain, key: (r: resources.Domain) => String(r.id) },
  { name: "contacts", path: PATHS.contacts, query: () => ({}), schema: resources.contactList, key: (r: resources.ContactList) => r.uid },
  {
    name: "leads",
    path: PATHS.leads,
    query: () => ({ campaign_uid: busiest((data) => data.leads.length) }),
    schema: resources.lead,
    key: (r: resources.Lead) => r.uid,
  },
  {
    name: "link-click-events",
    path: PATHS.linkClickEvents,
    query: () => ({ campaign_uid: busiest((data) => data.clicks.length) }),
    schema: resources.linkClickEvent,
    key: clickKey,
  },
  {
    name: "email-open-events",
    path: PATHS.emailOpenEvents,
    query: () => ({ campaign_uid: busiest((data) => data.opens.length) }),
    schema: resources.emailOpenEvent,
    key: openKey,
  },
];

describe.each(listings)("$name", (listing) => {
  it("limit defaults to 10", async () => {
    const page = await api.page(listing.path, listing.query());
    expect(page.data.length).toBe(Math.min(10, page.total));
  });

  it.each(["0", "101", "abc", "1.5", "-1"])("limit=%s answers 400 naming limit", async (limit) => {
    const answer = await api.get(listing.path, { ...listing.query(), limit });
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toContain("limit");
  });

  it.each(["1", "100"])("limit=%s is accepted", async (limit) => {
    const page = await api.page(listing.path, { ...listing.query(), limit });
    expect(page.data.length).toBe(Math.min(Number(limit), page.total));
  });

  it.each(["-1", "1.5", "abc", "-99999999999999999999"])("offset=%s answers 400 naming offset", async (offset) => {
    const answer = await api.get(listing.path, { ...listing.query(), offset });
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toContain("offset");
  });

  it("an offset past the end answers 200 with no data and the real total", async () => {
    const { total } = await api.page(listing.path, listing.query());
    const answer = await api.get(listing.path, { ...listing.query(), offset: total + 5, limit: 10 });
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ data: [], total });
  });

  it.each(["9007199254740993", "99999999999999999999"])("offset=%s, past 2^53, answers 200 with no data and the real total", async (offset) => {
    const { total } = await api.page(listing.path, listing.query());
    const answer = await api.get(listing.path, { ...listing.query(), offset });
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ data: [], total });
  });

  it("an offset equal to the total answers 200 with no data", async () => {
    const { total } = await api.page(listing.path, listing.query());
    const answer = await api.get(listing.path, { ...listing.query(), offset: total, limit: 100 });
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ data: [], total });
  });

  it("walking every page with limit 100 yields exactly total distinct records", async () => {
    const { records, total } = await api.walk(listing.path, listing.query(), listing.schema, 100);
    expect(records.length).toBe(total);
    expect(new Set(records.map((record) => listing.key(record as never))).size).toBe(total);
  });

  it("small pages tile the same records as one big page", async () => {
    const big = await api.walk(listing.path, listing.query(), listing.schema, 100);
    const small = await api.walk(listing.path, listing.query(), listing.schema, 3);
    expect(small.records.map((record) => listing.key(record as never))).toEqual(big.records.map((record) => listing.key(record as never)));
  });

  it("asc, desc and shuffle serve the same set in different orders", async () => {
    const keysIn = async (order: "asc" | "desc" | "shuffle") => {
      emulator().settings.order = order;
      const { records } = await api.walk(listing.path, listing.query(), listing.schema, 100);
      return records.map((record) => listing.key(record as never));
    };
    const asc = await keysIn("asc");
    const desc = await keysIn("desc");
    const shuffled = await keysIn("shuffle");
    expect([...desc].sort()).toEqual([...asc].sort());
    expect([...shuffled].sort()).toEqual([...asc].sort());
    expect(desc).toEqual([...asc].reverse());
    expect(asc.length).toBeGreaterThanOrEqual(6);
    expect(shuffled).not.toEqual(asc);
  });
});

describe("ordering", () => {
  it("the default order is ascending by creation", async () => {
    const { records } = await api.walk(PATHS.campaigns, {}, resources.campaignListItem);
    const created = records.map((record) => Date.parse(record.created_on));
    expect(created).toEqual([...created].sort((x, y) => x - y));
  });

  it("desc pages tile the listing too: a walk with small pages sees every record once", async () => {
    emulator().settings.order = "desc";
    const { records, total } = await api.walk(PATHS.campaigns, {}, resources.campaignListItem, 4);
    expect(new Set(records.map((record) => record.uid)).size).toBe(total);
  });

  it("shuffle keeps a listing's order stable across its own pages, so a walk sees every record once", async () => {
    emulator().settings.order = "shuffle";
    const { records, total } = await api.walk(PATHS.campaigns, {}, resources.campaignListItem, 4);
    expect(new Set(records.map((record) => record.uid)).size).toBe(total);
  });
});

describe.each([
  ["campaigns", PATHS.campaigns, resources.campaignListItem],
  ["domains", PATHS.domains, resources.domain],
  ["contacts", PATHS.contacts, resources.contactList],
] as const)("workspace_id filter on %s", (_name, path, schema) => {
  it("restricts to one workspace, and the workspaces partition the account's records", async () => {
    const all = await api.walk(path, {}, schema);
    let sum = 0;
    for (const workspace of seed.workspaces) {
      const filtered = await api.walk(path, { workspace_id: workspace.id }, schema);
      expect(filtered.records.every((record) => record.workspace_id === workspace.id)).toBe(true);
      expect(filtered.total).toBe(all.records.filter((record) => record.workspace_id === workspace.id).length);
      sum += filtered.total;
    }
    expect(sum).toBe(all.total);
    expect(seed.workspaces.length).toBeGreaterThan(1);
  });

  it.each(["99999999999", "99999999999999999999"])("workspace_id=%s, an integer naming no workspace, answers 404 naming it", async (id) => {
    const answer = await api.get(path, { workspace_id: id });
    expect(answer.status).toBe(404);
    expect(messageOf(answer)).toBe(`workspace_id: no workspace ${id}`);
  });

  it("workspace_id=abc answers 400 naming workspace_id", async () => {
    const answer = await api.get(path, { workspace_id: "abc" });
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toContain("workspace_id");
  });
});

describe("unpaginated listings", () => {
  it("workspaces come as a bare array by default", async () => {
    const answer = await api.get(PATHS.workspaces);
    expect(Array.isArray(answer.json)).toBe(true);
    expect(parseStrict(resources.workspace.array(), answer.json, "workspaces").length).toBe(seed.workspaces.length);
  });

  it("workspaces come as a {data,total} envelope when settings.workspaces is envelope", async () => {
    emulator().settings.workspaces = "envelope";
    const answer = await api.get(PATHS.workspaces);
    const envelope = parseStrict(resources.pageEnvelope, answer.json, "workspaces envelope");
    expect(envelope.total).toBe(seed.workspaces.length);
    expect(parseStrict(resources.workspace.array(), envelope.data, "workspaces")).toEqual(seed.workspaces);
  });

  it("replies come as a bare array holding every reply of the campaign", async () => {
    const withReplies = [...seed.campaigns].sort((x, y) => y.replies.length - x.replies.length)[0];
    if (!withReplies || withReplies.replies.length < 11) throw new Error("the seed has no campaign with more than a default page of replies");
    const nested = withReplies.leads.flatMap((lead) => lead.schedules.flatMap((schedule) => schedule.replies));
    const answer = await api.get(PATHS.replies, { campaign_uid: withReplies.summary.uid });
    expect(answer.status).toBe(200);
    expect(Array.isArray(answer.json)).toBe(true);
    expect((answer.json as unknown[]).length).toBe(nested.length);
  });
});
