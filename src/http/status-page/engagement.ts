import { sql, type Kysely } from "kysely";
import type { Database } from "../../warehouse/database.ts";

/**
 * The engagement panel, straight from the warehouse's views: the funnel of
 * each campaign (campaign_funnel) and the account's activity per day
 * (engagement_daily). The day window ends at the latest day with any
 * activity, not today: a paused account, or the emulator's simulated clock,
 * still shows its last month instead of an empty chart.
 */

export interface FunnelRow {
  uid: string;
  name: string | null;
  status: string | null;
  leads: number;
  sent: number;
  opened: number;
  clicked: number;
  replied: number;
  positive: number;
  replyRate: number | null;
}

export interface DayOfEngagement {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  sends: number;
  opens: number;
  clicks: number;
  replies: number;
}

export interface Engagement {
  funnel: FunnelRow[];
  /** Every day of the window, zeros included, oldest first; empty when nothing ever happened. */
  days: DayOfEngagement[];
}

export async function engagement(db: Kysely<Database>, account: string, days: number): Promise<Engagement> {
  // The views span every account of the warehouse; campaigns say which are this one's.
  const ownCampaigns = db.selectFrom("campaigns").select("uid").where("_account", "=", account);
  const [funnel, daily] = await Promise.all([
    db
      .selectFrom("campaign_funnel")
      .select(["campaign_uid", "name", "status", "leads", "emails_sent", "opened", "clicked", "replied", "positive_replies", "reply_rate"])
      .where("campaign_uid", "in", ownCampaigns)
      .orderBy("emails_sent", "desc")
      .orderBy("name")
      .execute(),
    sql<DayOfEngagement>`
      WITH per_day AS (
        SELECT day, sum(sends)::int AS sends, sum(opens)::int AS opens, sum(clicks)::int AS clicks, sum(replies)::int AS replies
          FROM engagement_daily
         WHERE campaign_uid IN (SELECT uid FROM campaigns WHERE _account = ${account})
         GROUP BY day
      )
      SELECT to_char(day, 'YYYY-MM-DD') AS day, sends, opens, clicks, replies
        FROM per_day
       WHERE day > (SELECT max(day) FROM per_day) - ${days}::int
       ORDER BY day`.execute(db),
  ]);
  return {
    funnel: funnel.map((row) => ({
      uid: row.campaign_uid,
      name: row.name,
      status: row.status,
      leads: row.leads,
      sent: row.emails_sent,
      opened: row.opened,
      clicked: row.clicked,
      replied: row.replied,
      positive: row.positive_replies,
      replyRate: row.reply_rate,
    })),
    days: everyDay(daily.rows, days),
  };
}

const DAY_MS = 86_400_000;

/** The view lists only days with activity; a chart wants the quiet days too. */
export function everyDay(rows: readonly DayOfEngagement[], days: number): DayOfEngagement[] {
  const last = rows.at(-1);
  if (!last) return [];
  const byDay = new Map(rows.map((row) => [row.day, row]));
  const end = Date.parse(`${last.day}T00:00:00Z`);
  return Array.from({ length: days }, (_, index) => {
    const day = new Date(end - (days - 1 - index) * DAY_MS).toISOString().slice(0, 10);
    return byDay.get(day) ?? { day, sends: 0, opens: 0, clicks: 0, replies: 0 };
  });
}
