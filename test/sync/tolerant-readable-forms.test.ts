import { describe, expect, it } from "vitest";
import { runFullSync } from "../../src/sync/runs.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";

/**
 * Values whose meaning is certain in a form the reader did not take were stored as NULL (their raw kept in
 * `_field_issues`), though a deviating value is kept in its column when it can be read:
 * - booleans as "yes"/"no", "on"/"off", "t"/"f" (forms PostgreSQL itself reads as booleans);
 * - a date-time as Unix epoch milliseconds (a JSON number, as JavaScript's Date.now() writes it);
 * - a date-time as Ruby's Time#to_s writes it in UTC ("2026-05-01 10:00:00 UTC").
 * For an event's key (`opened_on`, `clicked_on`) the same forms rejected the whole event.
 */

type Json = Record<string, unknown>;
const CAMPAIGN = "cmp_readable_forms";
const scripted = useScriptedCampaigns(useTestDatabase("tolerant_readable_forms"), CAMPAIGN);

describe("values in forms whose meaning is certain", () => {
  it("reads archived \"yes\", sent_on as epoch milliseconds and schedule_datetime with a \" UTC\" suffix into their columns", async () => {
    const h = await scripted({ status: "running", leads: 1, sentOn: "2026-05-01T10:00:00.000Z" });
    const [campaign] = h.upstream.state.campaigns as unknown as Json[];
    (campaign as Json).archived = "yes";
    const [lead] = h.upstream.state.leads.get(CAMPAIGN) ?? [];
    const schedule = (lead as unknown as { schedules: Json[] }).schedules[0] as Json;
    schedule.sent_on = Date.parse("2026-05-01T10:00:00.000Z");
    schedule.schedule_datetime = "2026-05-01 09:00:00 UTC";

    await runFullSync(h.context());

    const db = h.warehouse.db;
    const campaignRow = await db.selectFrom("campaigns").select("archived").executeTakeFirstOrThrow();
    const scheduleRow = await db.selectFrom("schedules").select(["sent_on", "schedule_datetime"]).executeTakeFirstOrThrow();
    expect({
      archived: campaignRow.archived,
      sent_on: scheduleRow.sent_on?.toISOString() ?? null,
      schedule_datetime: scheduleRow.schedule_datetime?.toISOString() ?? null,
    }).toEqual({ archived: true, sent_on: "2026-05-01T10:00:00.000Z", schedule_datetime: "2026-05-01T09:00:00.000Z" });
    const issues = await db.selectFrom("schedules").select("_field_issues").executeTakeFirstOrThrow();
    expect(issues._field_issues).toMatchObject({
      leads: {
        sent_on: { reason: "a date-time sent as Unix epoch milliseconds; read as 2026-05-01T10:00:00.000000Z" },
        schedule_datetime: { reason: "date-time not in the documented UTC form; read as 2026-05-01T09:00:00.000000Z" },
      },
    });
  });

  it("places an open keyed by epoch seconds, and reads every boolean form PostgreSQL reads", async () => {
    const h = await scripted({ status: "running", leads: 1, sentOn: "2026-05-01T10:00:00.000Z" });
    const [lead] = h.upstream.state.leads.get(CAMPAIGN) ?? [];
    const schedule = (lead as unknown as { schedules: Json[] }).schedules[0] as Json;
    schedule.email_opened = "on";
    schedule.reply_received = "F";
    h.upstream.state.opens.set(CAMPAIGN, [{ schedule_id: schedule.id as number, opened_on: 1777629600 as unknown as string }]);

    const summary = await runFullSync(h.context());

    const db = h.warehouse.db;
    const open = await db.selectFrom("email_opens").select("opened_on").executeTakeFirstOrThrow();
    const row = await db.selectFrom("schedules").select(["email_opened", "reply_received"]).executeTakeFirstOrThrow();
    expect({ opened_on: open.opened_on.toISOString(), ...row }).toEqual({ opened_on: "2026-05-01T10:00:00.000Z", email_opened: true, reply_received: false });
    expect(await db.selectFrom("rejected_records").select("reason").execute()).toEqual([]);
    expect(summary.rejected).toBe(0);
  });
});
