import { setTimeout as sleep } from "node:timers/promises";
import PQueue from "p-queue";
import { campaignLockName, discoveryLockName, runLockName, type RunLock } from "../warehouse/run-locks.ts";
import { syncCampaign, type Rhythm } from "./campaign-sync.ts";
import type { SyncContext } from "./context.ts";
import { runStream, SyncAbortedError, type StreamResult } from "./engine.ts";
import { throwIfAborted } from "./stream-run.ts";
import { RunLedger, type RunSummary } from "./run-ledger.ts";
import { ACCOUNT_STREAMS } from "./streams/index.ts";
import { isUnknownCampaign, UnknownCampaignError } from "./unknown-campaign.ts";
import { LinkedSignal } from "../linked-signal.ts";
import { isKeyRefused } from "../upstream/errors.ts";

/**
 * The three ways a sync runs, each recorded as one row of `sync_runs`:
 * discovery (the account's workspaces, domains, contact lists and campaign
 * listing), one campaign's streams, and a full walk of both (`sync --once`).
 */

export type { RunSummary } from "./run-ledger.ts";

export interface CampaignRef {
  uid: string;
  /** As the upstream sent it: a status the spec does not list is kept as text, an unreadable one is null. */
  status: string | null;
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

async function withLedger(
  ctx: SyncContext,
  scope: { campaignUid: string | null; rhythm?: Rhythm; heldAs?: string },
  work: (run: SyncContext, ledger: RunLedger) => Promise<void>,
): Promise<RunSummary> {
  // Runs may share one client (a worker's concurrent jobs): each counts its requests through a view of its own,
  // and the events rhythm's requests go first: freshness is bought with the shared request budget before walks are.
  const run: SyncContext = { ...ctx, client: ctx.client.tallied({ priority: scope.rhythm === "events" ? EVENTS_PRIORITY : 0 }) };
  const ledger = await RunLedger.open(run, scope.campaignUid, scope.rhythm === undefined || scope.rhythm === "all" ? null : scope.rhythm, scope.heldAs);
  try {
    await work(run, ledger);
  } catch (error) {
    if (error instanceof SyncAbortedError) ledger.markAborted();
    else ledger.fail(null, "run", error instanceof Error ? error : new Error(String(error)));
  }
  return ledger.close();
}

/** Rank of the events rhythm's requests among those waiting for a connection (leads walks and discovery: 0). */
const EVENTS_PRIORITY = 1;

/** Another process is syncing the campaign right now (a worker beside `sync --once`, or two workers). */
export class CampaignBusyError extends Error {
  constructor(readonly campaignUid: string) {
    super(`campaign ${campaignUid} is being synced by another process right now; it was skipped`);
    this.name = "CampaignBusyError";
  }
}

interface HeldLock {
  /** The caller's context, its signal also aborted when a lock is lost. */
  ctx: SyncContext;
  release(): Promise<void>;
}

/**
 * Takes the campaign's run locks for `rhythm` (both for `all`), so that one
 * rhythm of a campaign is synced by one process at a time, together with
 * `holder` (the lock the campaign's run row names) when given: one session
 * holds them all. Throws CampaignBusyError, holding nothing, when another
 * process holds one.
 */
async function holdCampaign(ctx: SyncContext, campaignUid: string, rhythm: Rhythm, holder?: string): Promise<HeldLock> {
  if (!ctx.locks) return { ctx, release: async () => undefined };
  const rhythms = rhythm === "all" ? (["leads", "events"] as const) : [rhythm];
  const names = [...rhythms.map((each) => campaignLockName(ctx.account, campaignUid, each)), ...(holder === undefined ? [] : [holder])];
  const lock = await ctx.locks.acquire(names);
  if (lock === null) throw new CampaignBusyError(campaignUid);
  return underLock(ctx, lock);
}

/**
 * The context stopped also when the lock is lost (its session ended): work done under a lock stops with it.
 * Releasing the lock unlinks the context's signal from the caller's, which may live as long as the process.
 */
function underLock(ctx: SyncContext, lock: RunLock): HeldLock {
  const linked = new LinkedSignal([ctx.signal, lock.signal]);
  return {
    ctx: { ...ctx, signal: linked.signal },
    release: async () => {
      linked.dispose();
      await lock.release();
    },
  };
}

/** Waits between tries of the lock another process's discovery holds, doubling: each try opens a connection. */
const DISCOVERY_LOCK_RETRY_MS = { first: 250, longest: 4_000 };

/**
 * Waits for the account's discovery lock. The account's listings carry no
 * observation time (campaigns do, and are ordered by it), so of two
 * discoveries side by side (a worker's and `sync --once`) the one that wrote
 * last would win even with the older answer, and the history would record a
 * change that never happened. One after the other, the later reads later.
 */
async function holdDiscovery(ctx: SyncContext): Promise<RunLock | undefined> {
  if (!ctx.locks) return undefined;
  for (let waitMs = DISCOVERY_LOCK_RETRY_MS.first; ; waitMs = Math.min(waitMs * 2, DISCOVERY_LOCK_RETRY_MS.longest)) {
    const lock = await ctx.locks.acquire([discoveryLockName(ctx.account)]);
    if (lock !== null) return lock;
    try {
      await sleep(waitMs, undefined, ctx.signal ? { signal: ctx.signal } : {});
    } catch {
      throwIfAborted(ctx.signal);
    }
  }
}

async function discover(ctx: SyncContext, ledger: RunLedger): Promise<CampaignRef[]> {
  const lock = await holdDiscovery(ctx);
  const held = lock ? underLock(ctx, lock) : { ctx, release: async () => undefined };
  try {
    for (const stream of ACCOUNT_STREAMS) {
      ledger.add(await runStream(held.ctx, stream, { account: ctx.account, campaignUid: null }, { runId: ledger.runId }));
    }
  } finally {
    await held.release();
  }
  return ctx.db
    .selectFrom("campaigns")
    .select(["uid", "status"])
    .where("_account", "=", ctx.account)
    .where("_deleted_at", "is", null)
    .orderBy("created_on")
    .orderBy("uid")
    .execute();
}

export async function runDiscovery(ctx: SyncContext): Promise<RunSummary & { campaigns: CampaignRef[] }> {
  let campaigns: CampaignRef[] = [];
  const summary = await withLedger(ctx, { campaignUid: null }, async (run, ledger) => {
    campaigns = await discover(run, ledger);
  });
  return { ...summary, campaigns };
}

/**
 * One campaign's streams of `rhythm`, as the worker's jobs run them. The
 * campaign's locks are taken before its run row is opened, so a run row still
 * `running` for this campaign and rhythm can only be a dead process's.
 * Throws CampaignBusyError when another process syncs it right now.
 */
export async function runCampaignSync(ctx: SyncContext, campaignUid: string, rhythm: Rhythm = "all"): Promise<RunSummary> {
  const holder = runLockName();
  const held = await holdCampaign(ctx, campaignUid, rhythm, holder);
  try {
    return await withLedger(held.ctx, { campaignUid, rhythm, heldAs: ctx.locks ? holder : undefined }, async (run, ledger) => {
      await syncCampaign(run, campaignUid, ledger.runId, (result) => ledger.add(result), rhythm);
    });
  } finally {
    await held.release();
  }
}

export async function runFullSync(ctx: SyncContext, options: FullSyncOptions = {}): Promise<RunSummary> {
  return withLedger(ctx, { campaignUid: options.campaignUid ?? null }, async (run, ledger) => {
    // The engine takes a 404 on a campaign's detail for a deletion upstream: for a uid never held, it is a typo.
    if (options.campaignUid !== undefined && (await isUnknownCampaign(run, options.campaignUid))) {
      ledger.fail(options.campaignUid, "campaign", new UnknownCampaignError(options.campaignUid));
      return;
    }
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
    // What ends the run before its last campaign: a stop it was asked for, or the upstream refusing the key.
    let aborted: unknown;
    let refused: unknown;
    await Promise.all(
      campaigns.map((uid) =>
        queue.add(async () => {
          if (aborted || refused) return;
          try {
            const held = await holdCampaign(run, uid, "all");
            try {
              await syncCampaign(held.ctx, uid, ledger.runId, count);
            } finally {
              await held.release();
            }
          } catch (error) {
            if (error instanceof SyncAbortedError) aborted = error;
            else if (isKeyRefused(error)) refused ??= error;
            else ledger.fail(uid, "campaign", error instanceof Error ? error : new Error(String(error)));
          }
          progress.campaignsDone += 1;
          options.onProgress?.(progress);
        }),
      ),
    );
    if (aborted) throw aborted;
    if (refused) throw refused;
  });
}
