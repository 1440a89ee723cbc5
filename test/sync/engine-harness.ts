import { afterEach } from "vitest";
import { UpstreamClient } from "../../src/upstream/client.ts";
import type { Lead } from "../../src/upstream/resources.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns, type ScriptedCampaign } from "../support/scripted-campaign.ts";

/**
 * The engine against an upstream scripted request by request (issue 16): each
 * scenario replays the exact sequence in which the warehouse used to end wrong
 * while the run said `succeeded`. This is what the files of those scenarios
 * (engine-walks, engine-rejected, engine-runs) share: one scripted campaign
 * and ways to read and change its leads.
 */

export const CAMPAIGN = "cmp_scripted";
export type Harness = ScriptedCampaign;

/**
 * Registers the file's own test database (`label`) and returns a maker of a running (or complete) campaign with
 * `count` leads L1..Ln, one schedule each (ids 1001..), all sending sequence 1.
 */
export function useEngineHarness(label: string): (count: number, status?: "running" | "complete") => Promise<Harness> {
  const scripted = useScriptedCampaigns(useTestDatabase(label), CAMPAIGN);
  return (count, status = "running") => scripted({ status, leads: count });
}

export async function liveLeads(h: Harness): Promise<string[]> {
  const rows = await h.warehouse.db.selectFrom("leads").select("uid").where("campaign_uid", "=", CAMPAIGN).where("_deleted_at", "is", null).execute();
  return rows.map((row) => row.uid).sort();
}

export const leadsOf = (h: Harness) => h.upstream.state.leads.get(CAMPAIGN) as Lead[];
export const uids = (leads: readonly Lead[]) => leads.map((lead) => lead.uid).sort();
export const isLeadsPage = (path: string, offset: number) => (query: URLSearchParams) => path === "/api/v1/leads/" && Number(query.get("offset")) >= offset;

/**
 * Registers the closing of its clients after each test and returns a maker of clients of the harness's upstream
 * with a small page size, so that page boundaries fall where a test wants them.
 */
export function useSmallPages(): (h: Harness, pageSize: number) => UpstreamClient {
  const clients: UpstreamClient[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
  });
  return (h, pageSize) => {
    const client = new UpstreamClient({ baseUrl: h.upstream.url, apiKey: "k", requestsPerSecond: 5_000, maxRetries: 1, retryBaseMs: 1, retryCapMs: 5, timeoutMs: 5_000, pageSize });
    clients.push(client);
    return client;
  };
}
