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

// Fresh schedules are looked up by id first; then each events table is read once for all of them, through its
// schedule_id index with the array of their ids, and one aggregate per schedule decides. It holds no join on
// purpose: after a bulk load PostgreSQL's estimates are stale, and joins of the fresh schedules to per-schedule
// aggregates became nested loops (0.9 s for a campaign of the `large` benchmark whose clicks had no ids yet,
// where this takes 47 ms; 39 ms against 49 ms for the check per schedule it replaces, four index probes each).
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
    )
    SELECT s.lead_uid FROM schedules s
     WHERE s.campaign_uid = ${campaignUid} AND s._deleted_at IS NULL AND s.id IN (SELECT schedule_id FROM gone)
    UNION
    -- One row per fresh schedule, and one per live event on it: what the schedule says beside what the events are.
    SELECT max(lead_uid) FROM (
      SELECT id AS schedule_id, lead_uid, reply_received, email_opened, email_open_count,
             0 AS replies, 0 AS unlinked_replies, 0 AS unlinked_clicks, 0 AS opens FROM fresh
      UNION ALL SELECT schedule_id, NULL, NULL, NULL, NULL, 1, (lead_uid IS NULL)::int, 0, 0 FROM replies
       WHERE schedule_id = ANY(CAST((SELECT ids FROM ids) AS bigint[])) AND _deleted_at IS NULL
      UNION ALL SELECT schedule_id, NULL, NULL, NULL, NULL, 0, 0, 1, 0 FROM link_clicks
       WHERE schedule_id = ANY(CAST((SELECT ids FROM ids) AS bigint[])) AND _deleted_at IS NULL AND id IS NULL
      UNION ALL SELECT schedule_id, NULL, NULL, NULL, NULL, 0, 0, 0, 1 FROM email_opens
       WHERE schedule_id = ANY(CAST((SELECT ids FROM ids) AS bigint[])) AND _deleted_at IS NULL
    ) schedule_events
     GROUP BY schedule_id
    HAVING (sum(replies) > 0 AND (bool_or(reply_received) IS NOT TRUE OR sum(unlinked_replies) > 0))
        OR sum(unlinked_clicks) > 0
        OR sum(opens) > CASE WHEN bool_or(email_opened) IS TRUE THEN coalesce(max(email_open_count), 1) ELSE 0 END
     ORDER BY 1`.execute(ctx.db);
  return rows.map((row) => row.lead_uid);
}
