import { UpstreamError, type PagedResource, type PagesQuery, type RecordOf, type UpstreamClient } from "../../src/upstream/client.ts";

/**
 * Reads every listing of an account through the client, the way a sync does,
 * and keys what it saw in the ground truth's format (GroundTruth in
 * src/emulator/options.ts). Records may arrive between two page requests
 * (contract A.3); a listing whose total moved while it was paged may have
 * skipped or repeated records, so it is walked again until one walk of it
 * sees a steady total.
 */

export type Entity = "workspaces" | "replies" | PagedResource;
export type SeenKeys = Record<Entity, string[]>;

interface Reading {
  keys: string[];
  /** Whether the listing's total changed between its pages. */
  moved: boolean;
  rejected: number;
}

interface Listing {
  label: string;
  entity: Entity;
  /** The campaign whose listing this is; when one of a campaign's listings moved, all of them are read again. */
  campaignUid?: string;
  read(client: UpstreamClient): Promise<Reading>;
}

export interface AccountWalk {
  /** The last, steady reading of every listing, concatenated per entity. */
  settled: SeenKeys;
  /** Every key any reading saw. */
  everSeen: Record<Entity, Set<string>>;
  /** Listings that had to be walked again because their total moved. */
  rewalks: number;
  rejected: number;
}

function paged<R extends PagedResource>(resource: R, query: PagesQuery, keyOf: (record: RecordOf<R>) => string): Listing {
  return {
    label: query.campaignUid === undefined ? resource : `${resource} ${query.campaignUid}`,
    entity: resource,
    ...(query.campaignUid === undefined ? {} : { campaignUid: query.campaignUid }),
    async read(client) {
      const reading: Reading = { keys: [], moved: false, rejected: 0 };
      let total: number | null | undefined;
      try {
        for await (const page of client.pages(resource, query)) {
          if (total !== undefined && page.total !== total) reading.moved = true;
          total = page.total;
          reading.rejected += page.rejected.length;
          reading.keys.push(...page.records.map((record) => keyOf(record.value)));
        }
      } catch (error) {
        // A campaign deleted upstream while it was being read has nothing left to list.
        if (query.campaignUid !== undefined && error instanceof UpstreamError && error.status === 404) return { keys: [], moved: false, rejected: 0 };
        throw error;
      }
      // A reading that holds more or fewer distinct keys than the total met a listing that moved under it.
      if (typeof total === "number" && new Set(reading.keys).size + reading.rejected !== total) reading.moved = true;
      return reading;
    },
  };
}

const workspaces: Listing = {
  label: "workspaces",
  entity: "workspaces",
  async read(client) {
    const { records, rejected } = await client.listWorkspaces();
    return { keys: records.map((workspace) => String(workspace.value.id)), moved: false, rejected: rejected.length };
  },
};

function replies(campaignUid: string): Listing {
  return {
    label: `replies ${campaignUid}`,
    entity: "replies",
    campaignUid,
    async read(client) {
      const { records, rejected } = await client.listReplies(campaignUid);
      return { keys: records.map((reply) => String(reply.value.id)), moved: false, rejected: rejected.length };
    },
  };
}

function listingsOf(campaignUid: string): Listing[] {
  return [
    paged("leads", { campaignUid }, (lead) => lead.uid),
    paged("link_clicks", { campaignUid }, (click) => `${click.schedule_id}|${click.link}|${click.clicked_on}`),
    paged("email_opens", { campaignUid }, (open) => `${open.schedule_id}|${open.opened_on}`),
    replies(campaignUid),
  ];
}

const emptyKeys = (): SeenKeys => ({ workspaces: [], domains: [], contact_lists: [], campaigns: [], leads: [], replies: [], link_clicks: [], email_opens: [] });

export async function walkAccount(client: UpstreamClient, maxRounds = 10): Promise<AccountWalk> {
  const latest = new Map<string, { entity: Entity; campaignUid?: string; keys: string[] }>();
  const everSeen = Object.fromEntries(Object.keys(emptyKeys()).map((entity) => [entity, new Set<string>()])) as AccountWalk["everSeen"];
  const campaignsWalked = new Set<string>();
  let rewalks = 0;
  let rejected = 0;
  let pending: Listing[] = [
    workspaces,
    paged("domains", {}, (domain) => String(domain.id)),
    paged("contact_lists", {}, (list) => list.uid),
    paged("campaigns", {}, (campaign) => campaign.uid),
  ];
  for (let round = 1; pending.length > 0; round++) {
    if (round > maxRounds) throw new Error(`listings still moving after ${maxRounds} rounds: ${pending.map((listing) => listing.label).join(", ")}`);
    // Listings are read side by side, as the sync does; the client's own concurrency bounds what is in flight.
    const readings = await Promise.all(pending.map((listing) => listing.read(client)));
    const next = new Map<string, Listing>();
    readings.forEach((reading, index) => {
      const listing = pending[index] as Listing;
      latest.set(listing.label, { entity: listing.entity, campaignUid: listing.campaignUid, keys: reading.keys });
      for (const key of reading.keys) everSeen[listing.entity].add(key);
      rejected += reading.rejected;
      if (!reading.moved) return;
      // A lead deleted upstream takes its replies and events with it: every listing of its campaign is stale.
      for (const stale of listing.campaignUid === undefined ? [listing] : listingsOf(listing.campaignUid)) next.set(stale.label, stale);
    });
    rewalks += next.size;
    for (const campaignUid of everSeen.campaigns) {
      if (campaignsWalked.has(campaignUid)) continue;
      campaignsWalked.add(campaignUid);
      for (const listing of listingsOf(campaignUid)) next.set(listing.label, listing);
    }
    pending = [...next.values()];
  }
  // A campaign deleted after its listings were read (the campaigns listing moved, and was read again) takes them with it.
  const campaigns = new Set(latest.get("campaigns")?.keys);
  const settled = emptyKeys();
  for (const { entity, campaignUid, keys } of latest.values()) if (campaignUid === undefined || campaigns.has(campaignUid)) settled[entity].push(...keys);
  return { settled, everSeen, rewalks, rejected };
}

export function sorted(values: Iterable<string>): string[] {
  return [...values].sort();
}
