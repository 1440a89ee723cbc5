import PQueue from "p-queue";
import type { CampaignStatus } from "../upstream/enums.ts";
import { syncCampaign } from "./campaign-sync.ts";
import type { SyncContext } from "./context.ts";
import { runStream, SyncAbortedError, type StreamResult } from "./engine.ts";
import { RunLedger, type RunSummary } from "./run-ledger.ts";
import { ACCOUNT_STREAMS } from "./streams/index.ts";

/**
 * The three ways a sync runs, each recorded as one row of `sync_runs`:
 * discovery (the account's workspaces, domains, contact lists and campaign
 * listing), one campaign's streams, and a full walk of both (`sync --once`).
 */

export type { RunSummary } from "./run-ledger.ts";

export interface CampaignRef {
  uid: string;
  status: CampaignStatus;
}

export interface FullSyncProgress {
  campaignsDone: number;
  campaignsTotal: number;
  records: number;
}

export interface FullSyncOptions {
  /** Limit the run to one campaign (its streams only). */
  campaignUid?: string;
  /** Campaigns synced at the same time; fetching one while writing another keeps both sides busy. */
  campaignConcurrency?: number;
  onProgress?(progress: FullSyncProgress): void;
}

async function withLedger(ctx: SyncContext, scope: string | null, work: (run: SyncContext, ledger: RunLedger) => Promise<void>): Promise<RunSummary> {
  // Runs may share one client (a worker's concurrent jobs): each counts its requests through a view of its own.
  const run: SyncContext = { ...ctx, client: ctx.client.tallied() };
  const ledger = await RunLedger.open(run, scope);
  try {
    await work(run, ledger);
  } catch (error) {
    if (error instanceof SyncAbortedError) ledger.markAborted();
    else ledger.fail(null, "run", error instanceof Error ? error : new Error(String(error)));
  }
  return ledger.close();
}

async function discover(ctx: SyncContext, ledger: RunLedger): Promise<CampaignRef[]> {
  for (const stream of ACCOUNT_STREAMS) {
    ledger.add(await runStream(ctx, stream, { account: ctx.account, campaignUid: null }, { runId: ledger.runId }));
  }
  return ctx.db
    .selectFrom("campaigns")
    .select(["uid", "status"])
    .where("_account", "=", ctx.account)
    .where("_deleted_at", "is", null)
    .orderBy("created_on")
    .orderBy("uid")
    .execute() as Promise<CampaignRef[]>;
}

export async function runDiscovery(ctx: SyncContext): Promise<RunSummary & { campaigns: CampaignRef[] }> {
  let campaigns: CampaignRef[] = [];
  const summary = await withLedger(ctx, null, async (run, ledger) => {
    campaigns = await discover(run, ledger);
  });
  return { ...summary, campaigns };
}

export async function runCampaignSync(ctx: SyncContext, campaignUid: string): Promise<RunSummary> {
  return withLedger(ctx, campaignUid, async (run, ledger) => {
    await syncCampaign(run, campaignUid, ledger.runId, (result) => ledger.add(result));
  });
}

export async function runFullSync(ctx: SyncContext, options: FullSyncOptions = {}): Promise<RunSummary> {
  return withLedger(ctx, options.campaignUid ?? null, async (run, ledger) => {
    const campaigns = options.campaignUid ? [options.campaignUid] : (await discover(run, ledger)).map((campaign) => campaign.uid);
    const progress: FullSyncProgress = { campaignsDone: 0, campaignsTotal: campaigns.length, records: 0 };
    const count = (result: StreamResult) => {
      ledger.add(result);
      progress.records += result.fetched;
      options.onProgress?.(progress);
    };
    for (const totals of Object.values(ledger.streams)) progress.records += totals.fetched;
    options.onProgress?.(progress);
    const queue = new PQueue({ concurrency: options.campaignConcurrency ?? 3 });
    let aborted: unknown;
    await Promise.all(
      campaigns.map((uid) =>
        queue.add(async () => {
          if (aborted) return;
          try {
            await syncCampaign(run, uid, ledger.runId, count);
          } catch (error) {
            if (error instanceof SyncAbortedError) aborted = error;
            else ledger.fail(uid, "campaign", error instanceof Error ? error : new Error(String(error)));
          }
          progress.campaignsDone += 1;
          options.onProgress?.(progress);
        }),
      ),
    );
    if (aborted) throw aborted;
  });
}
