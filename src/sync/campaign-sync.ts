import { TERMINAL_CAMPAIGN_STATUSES } from "../upstream/enums.ts";
import { UpstreamError, type RecordOf } from "../upstream/client.ts";
import { loadCheckpoint, saveCheckpoint, type Checkpoint, type CheckpointKey, type CheckpointState } from "./checkpoints.ts";
import type { SyncContext } from "./context.ts";
import { runStream, type StreamOptions, type StreamResult } from "./engine.ts";
import { staleLeads } from "./stale-leads.ts";
import type { StreamDefinition, StreamScope } from "./stream.ts";
import { retireUnreferencedSequences } from "./streams/email-sequences.ts";
import { CAMPAIGN_STREAMS, campaignDetail, emailOpens, emailSequences, LEAD_REFRESH, leads, leadsByUid, linkClicks, replies } from "./streams/index.ts";

/**
 * Every stream of one campaign, in two rhythms:
 *
 * - `leads`: the campaign's detail (#2), its leads walked in full (they change
 *   in place while it can send), and its email sequences. Once the campaign is
 *   terminal its leads get two final full walks, each a walk from the start
 *   that proved it saw every lead, in two cycles: a lead that went while
 *   another arrived before the cursor between the same two pages leaves no
 *   trace in one walk's count or anchors, and the second walk, at another time,
 *   sees what the first could not. After that the rhythm costs its detail,
 *   and a walk of its leads every COLDSYNC_TERMINAL_REWALK_EVERY (a contact
 *   that unsubscribes after the campaign ended brings no event with it).
 * - `events`: replies (one request), then link clicks and opens read from
 *   their cursors (a tail read), then the leads whose schedules do not show
 *   those events yet (stale-leads.ts), refreshed one by one (#12, at most
 *   REFRESH_LIMIT a cycle, the rest first in the next cycle), so that
 *   schedule flags move with the events instead of waiting for the next walk.
 *   A campaign that never started has no events: nothing is requested.
 *
 * `all` runs both as one (`sync --once`, and a worker with COLDSYNC_EVENTS_EVERY=off).
 * A status the spec does not list is treated as one that can still send.
 */

export type Rhythm = "leads" | "events" | "all";

/** Leads refreshed one by one per events cycle at most; more wait for the next cycle. */
export const REFRESH_LIMIT = 50;

export const isTerminal = (status: string | null | undefined): boolean =>
  typeof status === "string" && (TERMINAL_CAMPAIGN_STATUSES as readonly string[]).includes(status);

/** Statuses of a campaign that has not started sending (contract A.4). */
const UNSTARTED: ReadonlySet<string> = new Set(["creating", "created", "scheduled"]);

/**
 * Whether a campaign can have replies, clicks or opens: it started, or its status does not say it has not
 * (an unreadable status is not proof that nothing can happen, so its events are read).
 */
export function hasStarted(campaign: { status: string | null; started_running_at: unknown }): boolean {
  if (campaign.started_running_at !== null && campaign.started_running_at !== undefined) return true;
  return campaign.status === null || !UNSTARTED.has(campaign.status);
}

/** The events rhythm's listings, read in this order: each new event names the schedule it happened on. */
const EVENT_STREAMS: readonly StreamDefinition<{ schedule_id: number }>[] = [replies, linkClicks, emailOpens];

/** Their names, as checkpoints and the status page know them. */
export const EVENT_STREAM_NAMES: readonly string[] = EVENT_STREAMS.map((stream) => stream.name);

/** The names of the streams the engine reads of a campaign in this state: all of them, less its events while it has not started. */
export function streamsOf(campaign: { status: string | null; started_running_at: unknown }): string[] {
  const unread: readonly StreamDefinition[] = hasStarted(campaign) ? [] : EVENT_STREAMS;
  return CAMPAIGN_STREAMS.filter((stream) => !unread.includes(stream)).map((stream) => stream.name);
}

type Run = <R>(stream: StreamDefinition<R>, options?: Omit<StreamOptions<R>, "runId">) => Promise<StreamResult<R>>;

/** The campaign answered 404 to one of its listings and its detail confirms it is gone: the rest of its streams stop. */
class CampaignVanished extends Error {}

const notFound = (error: Error | undefined) => error instanceof UpstreamError && error.status === 404;

/** Runs the campaign's streams of `rhythm` in order, handing each stream's result to `onResult` as it finishes. */
export async function syncCampaign(
  ctx: SyncContext,
  campaignUid: string,
  runId: number,
  onResult: (result: StreamResult) => void,
  rhythm: Rhythm = "all",
): Promise<void> {
  const scope: StreamScope = { account: ctx.account, campaignUid };
  const run: Run = async (stream, options = {}) => {
    const result = await runStream(ctx, stream, scope, { runId, ...options });
    // A campaign deleted upstream while it is synced answers 404 to its listings: its detail says whether it is gone.
    if (notFound(result.error) && stream.name !== campaignDetail.name) {
      onResult((await runStream(ctx, campaignDetail, scope, { runId })) as StreamResult);
      if (await isSoftDeleted(ctx, campaignUid)) {
        delete result.error;
        onResult(result as StreamResult);
        throw new CampaignVanished();
      }
    }
    onResult(result as StreamResult);
    return result;
  };
  try {
    if (rhythm !== "events") await syncLeads(ctx, campaignUid, run);
    if (rhythm !== "leads") await syncEvents(ctx, campaignUid, run, runId);
  } catch (error) {
    if (!(error instanceof CampaignVanished)) throw error;
  }
}

async function isSoftDeleted(ctx: SyncContext, campaignUid: string): Promise<boolean> {
  const row = await ctx.db.selectFrom("campaigns").select("_deleted_at").where("uid", "=", campaignUid).executeTakeFirst();
  return row?._deleted_at !== null && row?._deleted_at !== undefined;
}

/**
 * The leads rhythm. A detail that failed or could not be placed says nothing about the leads: they are walked
 * with the status the warehouse holds for the campaign (its listing's), unless it holds the campaign nowhere live.
 */
async function syncLeads(ctx: SyncContext, campaignUid: string, run: Run): Promise<void> {
  const detail = await run<RecordOf<"campaign_detail">>(campaignDetail, { collect: true });
  const status = detail.records[0] === undefined ? await heldStatus(ctx, campaignUid) : detail.records[0].status;
  if (status === undefined) return;
  // Only a terminal campaign's walks are counted (the walk loads its own checkpoint): one that can send is walked every cycle.
  const checkpoint = isTerminal(status) ? await loadCheckpoint(ctx.db, { account: ctx.account, campaignUid, stream: leads.name }) : undefined;
  const finalWalksDone = checkpoint !== undefined && isFinalLeadsWalk(checkpoint) && !isRewalkDue(ctx, checkpoint);
  // Past the final walks, what follows the last of them in its cycle may still be due: a crash, a drain or a failed
  // #9 after its completion committed left it to this cycle, and no later one walks the leads again.
  if (finalWalksDone && (await sequencesReadSince(ctx, campaignUid, checkpoint))) return;
  // Each final walk was proven; a walk made now must prove itself before sequences no live schedule sends retire.
  let proven = true;
  if (!finalWalksDone) {
    const terminalWalks = checkpoint === undefined ? undefined : terminalWalksOf(checkpoint) + 1;
    const walked = await run(leads, { completedState: { scannedStatus: status ?? undefined, terminalWalks } });
    proven = !walked.error && walked.proven === true;
  }
  if (proven) await retireUnreferencedSequences(ctx.db, campaignUid, new Date());
  await run(emailSequences);
}

/**
 * Whether the campaign's email sequences were all looked up (#9) after its leads' last complete walk: the final
 * walks retire the sequences no live schedule sends, then look up the rest, and only that lookup's completion
 * records both done (each final walk is proven, so retiring after it again is as right as it was then).
 */
async function sequencesReadSince(ctx: SyncContext, campaignUid: string, leadsCheckpoint: Checkpoint): Promise<boolean> {
  const sequences = await loadCheckpoint(ctx.db, { account: ctx.account, campaignUid, stream: emailSequences.name });
  const walkedAt = leadsCheckpoint.lastCompleteScanAt;
  return walkedAt !== null && sequences.lastCompleteScanAt !== null && sequences.lastCompleteScanAt >= walkedAt;
}

/** Whether a terminal campaign past its final walks is due a walk of its leads again (SyncContext.terminalRewalkEveryMs). */
function isRewalkDue(ctx: SyncContext, checkpoint: Checkpoint, now = Date.now()): boolean {
  const last = checkpoint.lastCompleteScanAt;
  return ctx.terminalRewalkEveryMs !== undefined && last !== null && now - last.getTime() >= ctx.terminalRewalkEveryMs;
}

/** The status the warehouse holds for a live campaign (null when unreadable), undefined when it holds none live. */
async function heldStatus(ctx: SyncContext, campaignUid: string): Promise<string | null | undefined> {
  const row = await ctx.db.selectFrom("campaigns").select("status").where("uid", "=", campaignUid).where("_deleted_at", "is", null).executeTakeFirst();
  return row?.status;
}

/** Proven walks of a terminal campaign's leads after which they are walked no more. */
export const FINAL_WALKS = 2;

/** The streams of the leads rhythm that a terminal campaign's final walks end: after them, its detail alone is read. */
export const FINAL_WALK_STREAMS: readonly string[] = [leads.name, emailSequences.name];

/** The proven walks a leads checkpoint records as made while the campaign was terminal. */
function terminalWalksOf(checkpoint: Pick<Checkpoint, "state" | "lastCompleteScanAt">): number {
  if (!isTerminal(checkpoint.state.scannedStatus) || checkpoint.lastCompleteScanAt === null) return 0;
  return checkpoint.state.terminalWalks ?? 1;
}

/**
 * Whether a leads checkpoint records the final walks of a terminal campaign done, the last of them leaving no
 * lead it did not see undecided (one whose lookup failed is deleted, or not, only by another walk). A walk of it
 * under way after them (COLDSYNC_TERMINAL_REWALK_EVERY) leaves them done.
 */
function finalWalksDone(checkpoint: Pick<Checkpoint, "state" | "lastCompleteScanAt">): boolean {
  const undecided = (checkpoint.state.unconfirmedMissing ?? 0) > 0;
  return terminalWalksOf(checkpoint) >= FINAL_WALKS && !undecided;
}

/** Whether a terminal campaign's leads are walked no more: its final walks done, and no walk of them left half way (it resumes). */
export function isFinalLeadsWalk(checkpoint: Pick<Checkpoint, "state" | "lastCompleteScanAt" | "scanStartedAt">): boolean {
  return finalWalksDone(checkpoint) && checkpoint.scanStartedAt === null;
}

/**
 * Whether a leads checkpoint, as a `sync_checkpoints` row holds it, records a terminal campaign's final walks done:
 * its leads then count toward neither its lag (status) nor when its leads rhythm is due (cadence), a walk of them
 * under way or interrupted after the final ones included (it would make the campaign look a week behind).
 */
export function recordsFinalLeadsWalk(row: { state: unknown; last_complete_scan_at: Date | string | null }): boolean {
  return finalWalksDone({ state: row.state as CheckpointState, lastCompleteScanAt: row.last_complete_scan_at === null ? null : new Date(row.last_complete_scan_at) });
}

async function syncEvents(ctx: SyncContext, campaignUid: string, run: Run, runId: number): Promise<void> {
  const campaign = await ctx.db
    .selectFrom("campaigns")
    .select(["status", "started_running_at"])
    .where("uid", "=", campaignUid)
    .where("_deleted_at", "is", null)
    .executeTakeFirst();
  if (campaign === undefined || !hasStarted(campaign)) return;

  const refreshKey = { account: ctx.account, campaignUid, stream: LEAD_REFRESH };
  const refresh = await markEventReads(ctx, refreshKey, runId);
  const since = new Date(refresh.state.eventReadsSince as string);
  const fresh = new Set<number>();
  for (const stream of EVENT_STREAMS) await run(stream, { onFresh: (event) => fresh.add(event.schedule_id) });
  // Only schedules the warehouse holds can be refreshed: new schedules (sends) arrive with the leads walk.
  const stale = await staleLeads(ctx, campaignUid, { fresh: [...fresh], since });
  const due = [...new Set([...(refresh.state.waiting ?? []), ...stale])];
  // The events that made these leads stale are behind their cursors now: a refresh that fails must find them here,
  // and only once they are saved may the mark of where this cycle's event reads began go.
  await saveCheckpoint(ctx.db, refreshKey, { ...refresh, state: { ...refresh.state, waiting: due, eventReadsSince: undefined } }, runId);
  if (due.length === 0) return;
  if (due.length > REFRESH_LIMIT) {
    ctx.logger.info({ campaignUid, leads: due.length, limit: REFRESH_LIMIT }, "more leads need a refresh than one cycle takes; the rest wait for the next cycle");
  }
  await run(leadsByUid(due.slice(0, REFRESH_LIMIT)), { completedState: { waiting: due.slice(REFRESH_LIMIT) } });
}

/**
 * The lead-refresh checkpoint, marked with when the event reads began whose stale leads are not saved yet. Each
 * events page commits with its cursor, so a cycle stopped between its event reads and saving their stale leads would
 * leave those events behind their cursors, never read as new again: the mark is saved before the reads and dropped
 * with the stale leads, and a cycle that finds it left over keeps it and looks back to it (stale-leads.ts reads the
 * events written since). Only the events rhythm writes this checkpoint, so it is read once per cycle.
 */
async function markEventReads(ctx: SyncContext, key: CheckpointKey, runId: number): Promise<Checkpoint> {
  const checkpoint = await loadCheckpoint(ctx.db, key);
  if (checkpoint.state.eventReadsSince !== undefined) return checkpoint;
  const marked = { ...checkpoint, state: { ...checkpoint.state, eventReadsSince: new Date().toISOString() } };
  await saveCheckpoint(ctx.db, key, marked, runId);
  return marked;
}
