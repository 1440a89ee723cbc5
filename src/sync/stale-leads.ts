import { sql } from "kysely";
import type { SyncContext } from "./context.ts";

/**
 * Which leads the events rhythm refreshes one by one (#12): those whose
 * schedules do not yet show the events it just read. A lead the walk has just
 * read with its events (`sync --once` walks, then reads events) already shows
 * them: asking for it again would cost a request per lead and say nothing new.
 * Leads whose events were found gone in this cycle are refreshed too: the
 * newest copy of a schedule decides, so its counts go down with them.
 *
 * A schedule shows its events when it says it was replied to and every reply
 * on it came with the schedule's copy (which brings lead_uid), when each click
 * on it came with that copy too (only the copy brings a click's id), and when
 * it counts at least as many opens as the warehouse holds for it.
 */

export interface TouchedSchedules {
  /** Schedules of the replies, clicks and opens this cycle read for the first time. */
  fresh: readonly number[];
  /**
   * When the event reads started whose stale leads are not saved yet (this cycle's, or an earlier one's that
   * stopped first): events written or soft-deleted since then touched their schedules too.
   */
  since: Date;
}

// Fresh schedules are looked up by id first, so each check below reads the indexes of one schedule's events:
// a check over the whole campaign made PostgreSQL hash every reply of the warehouse, on every events cycle.
// `fresh` is MATERIALIZED because, inlined, the planner pushed the checks into its scan of the campaign's
// schedules and ran them on every schedule before joining the touched ones (37 against 25 ms for a campaign of
// the `large` benchmark).
export async function staleLeads(ctx: SyncContext, campaignUid: string, touched: TouchedSchedules): Promise<string[]> {
  const { rows } = await sql<{ lead_uid: string }>`
    WITH events AS (
      -- One read of each table for both: the events soft-deleted since, and those written since.
      SELECT schedule_id, coalesce(_deleted_at >= ${touched.since}, false) AS deleted FROM replies
       WHERE campaign_uid = ${campaignUid} AND (_synced_at >= ${touched.since} OR _deleted_at >= ${touched.since})
      UNION ALL SELECT schedule_id, coalesce(_deleted_at >= ${touched.since}, false) FROM link_clicks
       WHERE campaign_uid = ${campaignUid} AND (_synced_at >= ${touched.since} OR _deleted_at >= ${touched.since})
      UNION ALL SELECT schedule_id, coalesce(_deleted_at >= ${touched.since}, false) FROM email_opens
       WHERE campaign_uid = ${campaignUid} AND (_synced_at >= ${touched.since} OR _deleted_at >= ${touched.since})
    ), gone AS (
      SELECT schedule_id FROM events WHERE deleted
    ), touched AS (
      SELECT unnest(CAST(${touched.fresh} AS bigint[])) AS id
      UNION SELECT schedule_id FROM events WHERE NOT deleted
    ), fresh AS MATERIALIZED (
      SELECT s.* FROM schedules s JOIN touched t ON s.id = t.id
       WHERE s.campaign_uid = ${campaignUid} AND s._deleted_at IS NULL
    )
    SELECT s.lead_uid FROM schedules s
     WHERE s.campaign_uid = ${campaignUid} AND s._deleted_at IS NULL AND s.id IN (SELECT schedule_id FROM gone)
    UNION
    SELECT s.lead_uid FROM fresh s
     WHERE (EXISTS (SELECT 1 FROM replies r WHERE r.schedule_id = s.id AND r._deleted_at IS NULL)
             AND (s.reply_received IS NOT TRUE
               OR EXISTS (SELECT 1 FROM replies r WHERE r.schedule_id = s.id AND r._deleted_at IS NULL AND r.lead_uid IS NULL)))
        OR EXISTS (SELECT 1 FROM link_clicks c WHERE c.schedule_id = s.id AND c._deleted_at IS NULL AND c.id IS NULL)
        OR (SELECT count(*) FROM email_opens o WHERE o.schedule_id = s.id AND o._deleted_at IS NULL)
             > CASE WHEN s.email_opened IS TRUE THEN coalesce(s.email_open_count, 1) ELSE 0 END
     ORDER BY 1`.execute(ctx.db);
  return rows.map((row) => row.lead_uid);
}
