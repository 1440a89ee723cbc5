import { TERMINAL_CAMPAIGN_STATUSES } from "../upstream/enums.ts";
import type { Campaign } from "../upstream/resources.ts";
import { loadCheckpoint } from "./checkpoints.ts";
import type { SyncContext } from "./context.ts";
import { runStream, type StreamOptions, type StreamResult } from "./engine.ts";
import type { StreamDefinition, StreamScope } from "./stream.ts";
import { retireUnreferencedSequences } from "./streams/email-sequences.ts";
import { campaignDetail, emailOpens, emailSequences, leads, leadsByUid, linkClicks, replies } from "./streams/index.ts";

/**
 * Every stream of one campaign, from its checkpoints.
 *
 * Leads change in place while a campaign can still send, so they are walked
 * in full each cycle. Once the campaign is terminal they get one final full
 * walk; after that the cost follows what changed: the event listings are read
 * from where they stopped, and only the leads whose schedules got new events
 * are fetched again.
 */

const isTerminal = (status: string | undefined): boolean =>
  status !== undefined && (TERMINAL_CAMPAIGN_STATUSES as readonly string[]).includes(status);

/** Runs the campaign's streams in order, handing each stream's result to `onResult` as it finishes. */
export async function syncCampaign(ctx: SyncContext, campaignUid: string, runId: number, onResult: (result: StreamResult) => void): Promise<void> {
  const scope: StreamScope = { account: ctx.account, campaignUid };
  const run = async <R>(stream: StreamDefinition<R>, options: Omit<StreamOptions, "runId"> = {}) => {
    const result = await runStream(ctx, stream, scope, { runId, ...options });
    onResult(result as StreamResult);
    return result;
  };

  const detail = await run<Campaign>(campaignDetail, { collect: true });
  const campaign = detail.records[0];
  if (detail.error || campaign === undefined) return;

  const leadsCheckpoint = await loadCheckpoint(ctx.db, { account: ctx.account, campaignUid, stream: leads.name });
  const finalScanDone =
    isTerminal(campaign.status) &&
    isTerminal(leadsCheckpoint.state.scannedStatus) &&
    leadsCheckpoint.lastCompleteScanAt !== null &&
    leadsCheckpoint.scanStartedAt === null;
  if (!finalScanDone) {
    const walked = await run(leads, { completedState: { scannedStatus: campaign.status } });
    if (!walked.error) await retireUnreferencedSequences(ctx.db, campaignUid, new Date());
  }

  // Only a terminal campaign past its final scan needs to know which events are new.
  const collect = finalScanDone;
  const newReplies = await run(replies, { collect });
  const newClicks = await run(linkClicks, { collect });
  const newOpens = await run(emailOpens, { collect });

  if (finalScanDone) {
    const touchedSchedules = new Set<number>([
      ...newReplies.fresh.map((reply) => reply.schedule_id),
      ...newClicks.fresh.map((click) => click.schedule_id),
      ...newOpens.fresh.map((open) => open.schedule_id),
    ]);
    if (touchedSchedules.size > 0) {
      const rows = await ctx.db
        .selectFrom("schedules")
        .select("lead_uid")
        .distinct()
        .where("id", "in", [...touchedSchedules])
        .execute();
      await run(leadsByUid(rows.map((row) => row.lead_uid)));
    }
  }

  await run(emailSequences);
}
