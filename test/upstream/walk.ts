import type { UpstreamClient } from "../../src/upstream/client.ts";

/** Keys of what one walk saw, per entity, in the ground truth's format (options.ts, GroundTruth). */
export type SeenKeys = Record<"workspaces" | "domains" | "contact_lists" | "campaigns" | "leads" | "replies" | "link_clicks" | "email_opens", string[]>;

export interface Walk {
  keys: SeenKeys;
  /** The total each listing reported last, by "resource" or "resource campaign_uid". */
  totals: Map<string, number>;
  rejected: number;
}

/** Reads every listing of the account the way a full sync does. */
export async function walkAccount(client: UpstreamClient): Promise<Walk> {
  const keys: SeenKeys = { workspaces: [], domains: [], contact_lists: [], campaigns: [], leads: [], replies: [], link_clicks: [], email_opens: [] };
  const totals = new Map<string, number>();
  let rejected = 0;

  const workspaces = await client.listWorkspaces();
  rejected += workspaces.rejected.length;
  keys.workspaces.push(...workspaces.records.map((workspace) => String(workspace.id)));

  for await (const page of client.pages("domains", {})) {
    totals.set("domains", page.total);
    rejected += page.rejected.length;
    keys.domains.push(...page.records.map((domain) => String(domain.id)));
  }
  for await (const page of client.pages("contact_lists", {})) {
    totals.set("contact_lists", page.total);
    rejected += page.rejected.length;
    keys.contact_lists.push(...page.records.map((list) => list.uid));
  }
  for await (const page of client.pages("campaigns", {})) {
    totals.set("campaigns", page.total);
    rejected += page.rejected.length;
    keys.campaigns.push(...page.records.map((campaign) => campaign.uid));
  }

  for (const campaignUid of new Set(keys.campaigns)) {
    for await (const page of client.pages("leads", { campaignUid })) {
      totals.set(`leads ${campaignUid}`, page.total);
      rejected += page.rejected.length;
      keys.leads.push(...page.records.map((lead) => lead.uid));
    }
    for await (const page of client.pages("link_clicks", { campaignUid })) {
      totals.set(`link_clicks ${campaignUid}`, page.total);
      rejected += page.rejected.length;
      keys.link_clicks.push(...page.records.map((click) => `${click.schedule_id}|${click.link}|${click.clicked_on}`));
    }
    for await (const page of client.pages("email_opens", { campaignUid })) {
      totals.set(`email_opens ${campaignUid}`, page.total);
      rejected += page.rejected.length;
      keys.email_opens.push(...page.records.map((open) => `${open.schedule_id}|${open.opened_on}`));
    }
    const replies = await client.listReplies(campaignUid);
    totals.set(`replies ${campaignUid}`, replies.records.length + replies.rejected.length);
    rejected += replies.rejected.length;
    keys.replies.push(...replies.records.map((reply) => String(reply.id)));
  }
  return { keys, totals, rejected };
}

export function sameTotals(a: Map<string, number>, b: Map<string, number>): boolean {
  return a.size === b.size && [...a].every(([key, total]) => b.get(key) === total);
}

export function sorted(values: Iterable<string>): string[] {
  return [...values].sort();
}
