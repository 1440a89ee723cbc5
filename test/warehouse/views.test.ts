import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import type { Warehouse } from "../../src/warehouse/connect.ts";
import { upsert } from "../../src/warehouse/upsert.ts";
import { useBackends, useMigratedWarehouse } from "./backends.ts";
import { campaignDetailRow, campaignListingRow, contactRow, emailSequenceRow, leadRow, listedReplyRow, scheduleRow } from "./rows.ts";

const backends = useBackends("views");

const SYNCED = new Date("2024-03-05T00:00:00Z");
const GONE = new Date("2024-03-05T01:00:00Z");
const at = (text: string) => new Date(text);

/**
 * Campaign "a" in numbers (soft-deleted rows marked ✗ must not count):
 *   read by its detail, which counts 1 bounce; leads L1, L2 (contact 2 bounced in another campaign), L3; L4 ✗
 *   schedules (sequence, sent_on UTC, flags, events):
 *     101 S1 03-01 09:00  email_opened; opens 03-01 10:00 and 15:00; click ✗; reply ✗ (positive)
 *     102 S1 03-01 23:30  open event 03-02 01:00 only
 *     103 S1 03-02 10:00  click 03-02 11:00; reply positive 03-03 08:00
 *     104 S2 03-03 09:00  email_opened; open ✗; clicks 03-04 00:30 and 00:31; replies negative 03-04 09:00, neutral 10:00
 *     105 S2 unsent       email_opened set (an inconsistent flag: unsent schedules never count as opened)
 *     106 S2 ✗            sent 03-03 12:00
 * Campaign "b", only listed so far, has one sequence (S3) and nothing else; campaign "gone" ✗ has a lead, a sent schedule and S5.
 */
async function seed(warehouse: Warehouse): Promise<void> {
  const { db } = warehouse;
  await upsert(db, "campaigns", [campaignDetailRow("a", { bounces: 1 }), campaignListingRow("b", { status: "created" }), campaignListingRow("gone")], SYNCED);
  await upsert(db, "contacts", [contactRow(1), contactRow(2, { bounced: true }), contactRow(3), contactRow(4, { bounced: true }), contactRow(5)], SYNCED);
  const [l1, l2, l3, l4, lGone] = [leadRow("L1", "a", 1), leadRow("L2", "a", 2), leadRow("L3", "a", 3), leadRow("L4", "a", 4), leadRow("LG", "gone", 5)];
  await upsert(db, "leads", [l1, l2, l3, l4, lGone], SYNCED);
  await upsert(
    db,
    "email_sequences",
    [
      emailSequenceRow(1, "a", { order: 1, subject: "Intro" }),
      emailSequenceRow(2, "a", { order: 2, subject: "Follow-up" }),
      emailSequenceRow(3, "b", { order: 1, subject: "Hello" }),
      emailSequenceRow(4, "a", { order: 3, subject: "Removed step" }),
      emailSequenceRow(5, "gone", { order: 1, subject: "Gone" }),
    ],
    SYNCED,
  );
  await upsert(
    db,
    "schedules",
    [
      scheduleRow(101, l1, 1, { sent_on: at("2024-03-01T09:00:00Z"), email_opened: true, email_opened_on: at("2024-03-01T10:00:00Z"), email_open_count: 2 }),
      scheduleRow(102, l2, 1, { sent_on: at("2024-03-01T23:30:00Z") }),
      scheduleRow(103, l3, 1, { sent_on: at("2024-03-02T10:00:00Z"), reply_received: true }),
      scheduleRow(104, l1, 2, { sent_on: at("2024-03-03T09:00:00Z"), email_opened: true, reply_received: true }),
      scheduleRow(105, l2, 2, { email_opened: true }),
      scheduleRow(106, l3, 2, { sent_on: at("2024-03-03T12:00:00Z") }),
      scheduleRow(201, lGone, 5, { sent_on: at("2024-03-01T09:00:00Z") }),
    ],
    SYNCED,
  );
  const open = (scheduleId: number, openedOn: string) => ({ campaign_uid: "a", schedule_id: scheduleId, opened_on: at(openedOn) });
  await upsert(
    db,
    "email_opens",
    [open(101, "2024-03-01T10:00:00Z"), open(101, "2024-03-01T15:00:00Z"), open(102, "2024-03-02T01:00:00Z"), open(104, "2024-03-03T10:00:00Z")],
    SYNCED,
  );
  const click = (scheduleId: number, link: string, clickedOn: string) => ({ campaign_uid: "a", schedule_id: scheduleId, link, clicked_on: at(clickedOn) });
  await upsert(
    db,
    "link_clicks",
    [
      click(101, "https://example.com/c", "2024-03-01T12:00:00Z"),
      click(103, "https://example.com/a", "2024-03-02T11:00:00Z"),
      click(104, "https://example.com/a", "2024-03-04T00:30:00Z"),
      click(104, "https://example.com/b", "2024-03-04T00:31:00Z"),
    ],
    SYNCED,
  );
  await upsert(
    db,
    "replies",
    [
      listedReplyRow(1, "a", 103, { reply_classification: "positive", received_on: at("2024-03-03T08:00:00Z") }),
      listedReplyRow(2, "a", 104, { reply_classification: "negative", received_on: at("2024-03-04T09:00:00Z") }),
      listedReplyRow(3, "a", 104, { reply_classification: "neutral", received_on: at("2024-03-04T10:00:00Z") }),
      listedReplyRow(4, "a", 101, { reply_classification: "positive", received_on: at("2024-03-01T16:00:00Z") }),
    ],
    SYNCED,
  );
  await db.updateTable("campaigns").set({ _deleted_at: GONE }).where("uid", "=", "gone").execute();
  await db.updateTable("leads").set({ _deleted_at: GONE }).where("uid", "=", "L4").execute();
  await db.updateTable("email_sequences").set({ _deleted_at: GONE }).where("id", "=", 4).execute();
  await db.updateTable("schedules").set({ _deleted_at: GONE }).where("id", "=", 106).execute();
  await db.updateTable("email_opens").set({ _deleted_at: GONE }).where("schedule_id", "=", 104).execute();
  await db.updateTable("link_clicks").set({ _deleted_at: GONE }).where("schedule_id", "=", 101).execute();
  await db.updateTable("replies").set({ _deleted_at: GONE }).where("id", "=", 4).execute();
}

describe.each(backends)("dashboard views on $name", (backend) => {
  const warehouse = useMigratedWarehouse(backend);

  beforeAll(async () => {
    await seed(warehouse());
  });

  it("campaign_funnel counts each campaign's funnel and rates", async () => {
    const rows = await warehouse().db.selectFrom("campaign_funnel").selectAll().orderBy("campaign_uid").execute();
    expect(rows).toEqual([
      {
        campaign_uid: "a",
        name: "Campaign a",
        status: "running",
        workspace_id: 1,
        leads: 3, // L1, L2, L3
        emails_sent: 4, // 101, 102, 103, 104
        opened: 3, // 101 (flag), 102 (event), 104 (flag)
        clicked: 2, // 103, 104
        replied: 2, // 103, 104
        positive_replies: 1,
        neutral_replies: 1,
        negative_replies: 1,
        bounced: 1, // the detail's count, not L2, whose contact bounced elsewhere
        open_rate: 0.75, // 3 / 4
        click_rate: 0.5, // 2 / 4
        reply_rate: 0.5, // 2 / 4
        positive_reply_rate: 0.25, // 1 / 4
        bounce_rate: 0.2, // 1 / 5 sent ever: 106, deleted since, was sent too, and the upstream's count covers it
      },
      {
        campaign_uid: "b",
        name: "Campaign b",
        status: "created",
        workspace_id: 1,
        leads: 0,
        emails_sent: 0,
        opened: 0,
        clicked: 0,
        replied: 0,
        positive_replies: 0,
        neutral_replies: 0,
        negative_replies: 0,
        bounced: null, // no detail read yet
        open_rate: null,
        click_rate: null,
        reply_rate: null,
        positive_reply_rate: null,
        bounce_rate: null,
      },
    ]);
  });

  it("engagement_daily counts events per UTC day, including days without sends, whatever the session's time zone", async () => {
    const rows = await warehouse()
      .db.transaction()
      .execute(async (trx) => {
        await sql`SET LOCAL TIME ZONE 'Pacific/Auckland'`.execute(trx);
        return trx.selectFrom("engagement_daily").selectAll().orderBy("campaign_uid").orderBy("day").execute();
      });
    expect(rows).toEqual([
      { campaign_uid: "a", day: "2024-03-01", sends: 2, opens: 2, clicks: 0, replies: 0 }, // 102 sent 23:30 UTC
      { campaign_uid: "a", day: "2024-03-02", sends: 1, opens: 1, clicks: 1, replies: 0 },
      { campaign_uid: "a", day: "2024-03-03", sends: 1, opens: 0, clicks: 0, replies: 1 },
      { campaign_uid: "a", day: "2024-03-04", sends: 0, opens: 0, clicks: 2, replies: 2 },
    ]);
  });

  it("sequence_step_performance counts each live step of a live campaign", async () => {
    const rows = await warehouse().db.selectFrom("sequence_step_performance").selectAll().orderBy("email_sequence_id").execute();
    expect(rows).toEqual([
      {
        campaign_uid: "a",
        email_sequence_id: 1,
        order: 1,
        subject: "Intro",
        emails_sent: 3, // 101, 102, 103
        opened: 2, // 101, 102
        clicked: 1, // 103
        replied: 1, // 103
        positive_replies: 1,
        open_rate: 0.6667,
        click_rate: 0.3333,
        reply_rate: 0.3333,
      },
      {
        campaign_uid: "a",
        email_sequence_id: 2,
        order: 2,
        subject: "Follow-up",
        emails_sent: 1, // 104; 105 unsent, 106 deleted
        opened: 1,
        clicked: 1,
        replied: 1,
        positive_replies: 0,
        open_rate: 1,
        click_rate: 1,
        reply_rate: 1,
      },
      {
        campaign_uid: "b",
        email_sequence_id: 3,
        order: 1,
        subject: "Hello",
        emails_sent: 0,
        opened: 0,
        clicked: 0,
        replied: 0,
        positive_replies: 0,
        open_rate: null,
        click_rate: null,
        reply_rate: null,
      },
    ]);
  });
});
