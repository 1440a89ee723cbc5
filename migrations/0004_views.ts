import { sql, type Kysely } from "kysely";

/**
 * Dashboard views (contract B). All of them skip soft-deleted rows and
 * campaigns. Rates are numeric rounded to 4 places and NULL when the
 * denominator is 0; the funnel rates are over emails sent, bounce_rate over
 * leads. docs/warehouse.md defines every measure.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const statements = [
    // One definition of "opened", "clicked" and "replied" for every view that counts them.
    sql`CREATE VIEW schedule_engagement AS
      SELECT s.id AS schedule_id,
             s.campaign_uid,
             s.lead_uid,
             s.email_sequence_id,
             s.sent_on,
             s.sent_on IS NOT NULL AS sent,
             s.sent_on IS NOT NULL AND (
               s.email_opened
               OR EXISTS (SELECT 1 FROM email_opens o WHERE o.schedule_id = s.id AND o._deleted_at IS NULL)
             ) AS opened,
             EXISTS (SELECT 1 FROM link_clicks k WHERE k.schedule_id = s.id AND k._deleted_at IS NULL) AS clicked,
             s.reply_received
               OR EXISTS (SELECT 1 FROM replies r WHERE r.schedule_id = s.id AND r._deleted_at IS NULL) AS replied
        FROM schedules s
       WHERE s._deleted_at IS NULL`,
    sql`CREATE VIEW campaign_funnel AS
      WITH lead_totals AS (
        SELECT l.campaign_uid,
               count(*) AS leads,
               count(*) FILTER (WHERE ct.bounced) AS bounced
          FROM leads l
          LEFT JOIN contacts ct ON ct.id = l.contact_id AND ct._deleted_at IS NULL
         WHERE l._deleted_at IS NULL
         GROUP BY l.campaign_uid
      ),
      schedule_totals AS (
        SELECT campaign_uid,
               count(*) FILTER (WHERE sent) AS emails_sent,
               count(*) FILTER (WHERE opened) AS opened,
               count(*) FILTER (WHERE clicked) AS clicked,
               count(*) FILTER (WHERE replied) AS replied
          FROM schedule_engagement
         GROUP BY campaign_uid
      ),
      reply_totals AS (
        SELECT campaign_uid,
               count(*) FILTER (WHERE reply_classification = 'positive') AS positive_replies,
               count(*) FILTER (WHERE reply_classification = 'neutral') AS neutral_replies,
               count(*) FILTER (WHERE reply_classification = 'negative') AS negative_replies
          FROM replies
         WHERE _deleted_at IS NULL
         GROUP BY campaign_uid
      ),
      totals AS (
        SELECT c.uid AS campaign_uid,
               c.name,
               c.status,
               c.workspace_id,
               COALESCE(lt.leads, 0) AS leads,
               COALESCE(st.emails_sent, 0) AS emails_sent,
               COALESCE(st.opened, 0) AS opened,
               COALESCE(st.clicked, 0) AS clicked,
               COALESCE(st.replied, 0) AS replied,
               COALESCE(rt.positive_replies, 0) AS positive_replies,
               COALESCE(rt.neutral_replies, 0) AS neutral_replies,
               COALESCE(rt.negative_replies, 0) AS negative_replies,
               COALESCE(lt.bounced, 0) AS bounced
          FROM campaigns c
          LEFT JOIN lead_totals lt ON lt.campaign_uid = c.uid
          LEFT JOIN schedule_totals st ON st.campaign_uid = c.uid
          LEFT JOIN reply_totals rt ON rt.campaign_uid = c.uid
         WHERE c._deleted_at IS NULL
      )
      SELECT campaign_uid, name, status, workspace_id,
             leads, emails_sent, opened, clicked, replied,
             positive_replies, neutral_replies, negative_replies, bounced,
             round(opened::numeric / NULLIF(emails_sent, 0), 4) AS open_rate,
             round(clicked::numeric / NULLIF(emails_sent, 0), 4) AS click_rate,
             round(replied::numeric / NULLIF(emails_sent, 0), 4) AS reply_rate,
             round(positive_replies::numeric / NULLIF(emails_sent, 0), 4) AS positive_reply_rate,
             round(bounced::numeric / NULLIF(leads, 0), 4) AS bounce_rate
        FROM totals`,
    sql`CREATE VIEW engagement_daily AS
      WITH events AS (
        SELECT campaign_uid, sent_on AS happened_at, 'send' AS kind FROM schedules
         WHERE sent_on IS NOT NULL AND _deleted_at IS NULL
        UNION ALL
        SELECT campaign_uid, opened_on, 'open' FROM email_opens WHERE _deleted_at IS NULL
        UNION ALL
        SELECT campaign_uid, clicked_on, 'click' FROM link_clicks WHERE _deleted_at IS NULL
        UNION ALL
        SELECT campaign_uid, received_on, 'reply' FROM replies WHERE _deleted_at IS NULL
      )
      SELECT e.campaign_uid,
             (e.happened_at AT TIME ZONE 'UTC')::date AS day,
             count(*) FILTER (WHERE e.kind = 'send') AS sends,
             count(*) FILTER (WHERE e.kind = 'open') AS opens,
             count(*) FILTER (WHERE e.kind = 'click') AS clicks,
             count(*) FILTER (WHERE e.kind = 'reply') AS replies
        FROM events e
       WHERE EXISTS (SELECT 1 FROM campaigns c WHERE c.uid = e.campaign_uid AND c._deleted_at IS NULL)
       GROUP BY e.campaign_uid, (e.happened_at AT TIME ZONE 'UTC')::date`,
    sql`CREATE VIEW sequence_step_performance AS
      WITH step_totals AS (
        SELECT email_sequence_id,
               count(*) FILTER (WHERE sent) AS emails_sent,
               count(*) FILTER (WHERE opened) AS opened,
               count(*) FILTER (WHERE clicked) AS clicked,
               count(*) FILTER (WHERE replied) AS replied
          FROM schedule_engagement
         GROUP BY email_sequence_id
      ),
      positive_totals AS (
        SELECT s.email_sequence_id, count(*) AS positive_replies
          FROM replies r
          JOIN schedules s ON s.id = r.schedule_id AND s._deleted_at IS NULL
         WHERE r._deleted_at IS NULL AND r.reply_classification = 'positive'
         GROUP BY s.email_sequence_id
      ),
      totals AS (
        SELECT q.campaign_uid,
               q.id AS email_sequence_id,
               q."order",
               q.subject,
               COALESCE(st.emails_sent, 0) AS emails_sent,
               COALESCE(st.opened, 0) AS opened,
               COALESCE(st.clicked, 0) AS clicked,
               COALESCE(st.replied, 0) AS replied,
               COALESCE(pt.positive_replies, 0) AS positive_replies
          FROM email_sequences q
          LEFT JOIN step_totals st ON st.email_sequence_id = q.id
          LEFT JOIN positive_totals pt ON pt.email_sequence_id = q.id
         WHERE q._deleted_at IS NULL
           AND EXISTS (SELECT 1 FROM campaigns c WHERE c.uid = q.campaign_uid AND c._deleted_at IS NULL)
      )
      SELECT campaign_uid, email_sequence_id, "order", subject,
             emails_sent, opened, clicked, replied, positive_replies,
             round(opened::numeric / NULLIF(emails_sent, 0), 4) AS open_rate,
             round(clicked::numeric / NULLIF(emails_sent, 0), 4) AS click_rate,
             round(replied::numeric / NULLIF(emails_sent, 0), 4) AS reply_rate
        FROM totals`,
  ];
  for (const statement of statements) await statement.execute(db);
}
