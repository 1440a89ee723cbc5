import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { runCampaignSync, runFullSync } from "../../src/sync/runs.ts";
import type { Lead } from "../../src/upstream/resources.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";

/**
 * The events rhythm refreshes the leads whose schedules do not show the events it read (stale-leads.ts): the
 * events written since its cycle began, and every event its walks read for the first time. A walk from the start
 * (the first, and one an hour after its last proof) reads the whole listing anew, so it checks every schedule with
 * events again, and mends one whose copy fell behind them though no event changed.
 */

const CAMPAIGN = "cmp_recheck";
const scripted = useScriptedCampaigns(useTestDatabase("events_recheck"), CAMPAIGN);
const SENT = "2026-05-01T09:00:00.000Z";

describe("an events walk from the start", () => {
  it("refreshes a lead whose schedule shows fewer opens than the events hold, though no event is new", async () => {
    const h = await scripted({ status: "running", leads: 1, sentOn: SENT });
    const lead = (h.upstream.state.leads.get(CAMPAIGN) as Lead[])[0] as Lead;
    const schedule = lead.schedules[0] as Lead["schedules"][number];
    Object.assign(schedule, { email_opened: true, email_opened_on: "2026-05-01T10:00:00.000Z", email_open_count: 2 });
    h.upstream.state.opens.set(CAMPAIGN, [
      { schedule_id: schedule.id, opened_on: "2026-05-01T10:00:00.000Z" },
      { schedule_id: schedule.id, opened_on: "2026-05-01T11:00:00.000Z" },
    ]);
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");

    // The schedule's copy fell behind (as a stale read would leave it); the opens listing has not changed.
    const { db } = h.warehouse;
    await db.updateTable("schedules").set({ email_opened: false, email_opened_on: null, email_open_count: 0 }).where("id", "=", schedule.id).execute();
    // More than an hour since the opens walk's last proof: the next walk starts from the start.
    await sql`UPDATE sync_checkpoints SET state = state - 'provenAt' WHERE stream = 'email_opens'`.execute(db);
    h.requested();

    expect((await runCampaignSync(h.context(), CAMPAIGN, "events")).outcome).toBe("succeeded");
    expect(h.requested()).toContain("/api/v1/lead/");
    expect(await db.selectFrom("schedules").select(["email_opened", "email_open_count"]).where("id", "=", schedule.id).executeTakeFirstOrThrow()).toEqual({
      email_opened: true,
      email_open_count: 2,
    });
  });
});
