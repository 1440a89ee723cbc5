import { afterEach } from "vitest";
import { createLogger } from "../../src/logger.ts";
import type { SyncContext } from "../../src/sync/context.ts";
import type { Campaign, Lead, Reply } from "../../src/upstream/resources.ts";
import { UpstreamClient } from "../../src/upstream/client.ts";
import { openWarehouse, type Warehouse } from "../../src/warehouse/connect.ts";
import { migrateToLatest } from "../../src/warehouse/migrate.ts";
import { buildCampaign, buildLead, buildSequence, emptyState, startScriptedUpstream, type ScriptedUpstream } from "./scripted-upstream.ts";

/**
 * One campaign on a scripted upstream, synced by the engine into a schema of
 * its own: leads L1..Ln with one schedule each (ids 1001..), all sending
 * sequence 1. Each test file makes as many as it needs; they are closed after
 * each test.
 */

export interface ScriptedCampaign {
  upstream: ScriptedUpstream;
  warehouse: Warehouse;
  client: UpstreamClient;
  /** A context for the engine: as the CLI runs it, with `overrides`. */
  context(overrides?: Partial<SyncContext>): SyncContext;
  /** Paths requested since the last call. */
  requested(): string[];
}

export interface ScriptedCampaignOptions {
  status: Campaign["status"];
  leads: number;
  /** When each lead's schedule was sent; null: not yet. */
  sentOn?: string | null;
}

/** Registers the clean-up and returns a maker of scripted campaigns whose uid is `campaignUid`, in `databaseUrl()`. */
export function useScriptedCampaigns(databaseUrl: () => string, campaignUid: string): (options: ScriptedCampaignOptions) => Promise<ScriptedCampaign> {
  const open: ScriptedCampaign[] = [];
  let schemas = 0;
  afterEach(async () => {
    for (const made of open.splice(0)) {
      await made.client.close();
      await made.warehouse.destroy();
      await made.upstream.close();
    }
  });

  return async ({ status, leads, sentOn = null }) => {
    const state = emptyState();
    state.campaigns.push(buildCampaign(campaignUid, status));
    state.sequences.set(1, buildSequence(1));
    state.leads.set(campaignUid, Array.from({ length: leads }, (_, index) => buildLead(`L${index + 1}`, 1001 + index, 1, sentOn)));
    const upstream = await startScriptedUpstream(state);
    schemas += 1;
    const warehouse = await openWarehouse({ databaseUrl: databaseUrl(), dataDir: ".coldsync", schema: `scripted_${schemas}` });
    await migrateToLatest(warehouse);
    const client = new UpstreamClient({ baseUrl: upstream.url, apiKey: "k", requestsPerSecond: 5_000, maxRetries: 1, retryBaseMs: 1, retryCapMs: 5, timeoutMs: 5_000 });
    let seen = 0;
    const made: ScriptedCampaign = {
      upstream,
      warehouse,
      client,
      context: (overrides = {}) => ({ client, db: warehouse.db, account: "acme", logger: createLogger({ level: "silent" }), trigger: "cli", ...overrides }),
      requested: () => {
        const paths = upstream.requests.slice(seen).map((request) => request.split("?")[0] as string);
        seen = upstream.requests.length;
        return paths;
      },
    };
    open.push(made);
    return made;
  };
}

/** A reply to lead `index`'s first schedule, in the schedule and in the reply listing, as the upstream shows it once it arrives. */
export function replyArrives(h: ScriptedCampaign, campaignUid: string, index: number, id: number): void {
  const lead = h.upstream.state.leads.get(campaignUid)?.[index] as Lead;
  const schedule = lead.schedules[0] as Lead["schedules"][number];
  const reply = { id, body_plain_text: "Interested", body_html: "<p>Interested</p>", received_on: "2026-05-02T08:00:00.000Z", reply_classification: "positive" as const };
  schedule.replies.push(reply);
  schedule.reply_received = true;
  const listed: Reply = { ...reply, schedule_id: schedule.id, mail_from: `${lead.uid}@example.com`, subject: "Re: Step 1" };
  h.upstream.state.replies.set(campaignUid, [...(h.upstream.state.replies.get(campaignUid) ?? []), listed]);
}
