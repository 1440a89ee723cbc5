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

// Fresh schedules are looked up by id first, and each events table is read once for all of them, through its
// schedule_id index with the array of their ids (one index scan, not one per schedule: 49 -> 34 ms for a campaign
// of the `large` benchmark); a check over the whole campaign made PostgreSQL hash every reply of the warehouse.
// `fresh` is MATERIALIZED so that it is looked up once, before the ids are gathered from it.
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
      SELECT s.id, s.lead_uid, s.reply_received, s.email_opened, s.email_open_count FROM schedules s JOIN touched t ON s.id = t.id
       WHERE s.campaign_uid = ${campaignUid} AND s._deleted_at IS NULL
    ), ids AS (
      SELECT array_agg(id) AS ids FROM fresh
    ), replied AS (
      SELECT schedule_id, bool_or(lead_uid IS NULL) AS unlinked FROM replies
       WHERE schedule_id = ANY(CAST((SELECT ids FROM ids) AS bigint[])) AND _deleted_at IS NULL GROUP BY schedule_id
    ), unlinked_clicks AS (
      SELECT DISTINCT schedule_id FROM link_clicks
       WHERE schedule_id = ANY(CAST((SELECT ids FROM ids) AS bigint[])) AND _deleted_at IS NULL AND id IS NULL
    ), opens AS (
      SELECT schedule_id, count(*) AS held FROM email_opens
       WHERE schedule_id = ANY(CAST((SELECT ids FROM ids) AS bigint[])) AND _deleted_at IS NULL GROUP BY schedule_id
    )
    SELECT s.lead_uid FROM schedules s
     WHERE s.campaign_uid = ${campaignUid} AND s._deleted_at IS NULL AND s.id IN (SELECT schedule_id FROM gone)
    UNION
    SELECT s.lead_uid FROM fresh s
      LEFT JOIN replied r ON r.schedule_id = s.id
      LEFT JOIN unlinked_clicks c ON c.schedule_id = s.id
      LEFT JOIN opens o ON o.schedule_id = s.id
     WHERE (r.schedule_id IS NOT NULL AND (s.reply_received IS NOT TRUE OR r.unlinked))
        OR c.schedule_id IS NOT NULL
        OR coalesce(o.held, 0) > CASE WHEN s.email_opened IS TRUE THEN coalesce(s.email_open_count, 1) ELSE 0 END
     ORDER BY 1`.execute(ctx.db);
  return rows.map((row) => row.lead_uid);
}
