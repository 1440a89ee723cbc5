import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { runFullSync } from "../../src/sync/runs.ts";
import { verify, type VerifyLine } from "../../src/sync/verify.ts";
import type { Lead } from "../../src/upstream/resources.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";
import { buildSequence } from "../support/scripted-upstream.ts";

/** Verify against a scripted upstream whose own shape (a repeated record, a deleted sequence) the test sets. */

const databaseUrl = useTestDatabase("verify_scripted");
const CAMPAIGN = "cmp_verified";
const scripted = useScriptedCampaigns(databaseUrl, CAMPAIGN);

const notOk = (lines: VerifyLine[]) => lines.filter((line) => line.status !== "ok").map((line) => `${line.stream}${line.table ? ` → ${line.table}` : ""} ${line.status} (${line.upstream}/${line.warehouse})`);

describe("verify and a listing that repeats a record on one page", () => {
  it("a leads page listing L1 twice: the warehouse holds every lead, so no line is missing", async () => {
    const h = await scripted({ status: "running", leads: 3, sentOn: "2026-05-01T09:05:00.000Z" });
    const leads = h.upstream.state.leads.get(CAMPAIGN) as Lead[];
    leads.splice(1, 0, structuredClone(leads[0] as Lead));
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    expect(await h.warehouse.db.selectFrom("leads").select("uid").where("_deleted_at", "is", null).execute()).toHaveLength(3);
    expect(notOk((await verify(h.context())).lines)).toEqual([]);
  });

  it("an open event listed twice on one page: the warehouse holds it once, as it should", async () => {
    const h = await scripted({ status: "running", leads: 2, sentOn: "2026-05-01T09:05:00.000Z" });
    const open = { schedule_id: 1001, opened_on: "2026-05-02T10:00:00.000Z" };
    h.upstream.state.opens.set(CAMPAIGN, [open, { ...open }]);
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    expect(notOk((await verify(h.context())).lines)).toEqual([]);
  });

  it("a reply listed twice by #13: the warehouse holds it once, as it should", async () => {
    const h = await scripted({ status: "running", leads: 2, sentOn: "2026-05-01T09:05:00.000Z" });
    const reply = { id: 501, schedule_id: 1001, body_plain_text: "Hi", body_html: "<p>Hi</p>", received_on: "2026-05-02T08:00:00.000Z", reply_classification: "positive" as const, mail_from: "l1@example.com", subject: "Re" };
    h.upstream.state.replies.set(CAMPAIGN, [reply, { ...reply }]);
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    expect(notOk((await verify(h.context())).lines)).toEqual([]);
  });
});

describe("an email sequence the upstream deleted, held live", () => {
  it("names the sequence #9 no longer knows and no schedule sends", async () => {
    const h = await scripted({ status: "running", leads: 2, sentOn: "2026-05-01T09:05:00.000Z" });
    const leads = h.upstream.state.leads.get(CAMPAIGN) as Lead[];
    // L2's schedule sends sequence 2.
    h.upstream.state.sequences.set(2, buildSequence(2));
    const schedule = (leads[1] as Lead).schedules?.[0];
    if (schedule?.email_data) schedule.email_data = { ...schedule.email_data, id: 2, subject: "Step 2" };
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    const held = async () => (await h.warehouse.db.selectFrom("email_sequences").select("id").where("_deleted_at", "is", null).orderBy("id").execute()).map((row) => Number(row.id));
    expect(await held()).toEqual([1, 2]);
    // The upstream deletes sequence 2 (its schedules are regenerated onto sequence 1); a sync would retire it.
    h.upstream.state.sequences.delete(2);
    if (schedule?.email_data) schedule.email_data = { ...schedule.email_data, id: 1, subject: "Step 1" };
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    expect(await held()).toEqual([1]);
    // The corruption: sequence 2 held live again.
    await sql`UPDATE email_sequences SET _deleted_at = NULL WHERE id = 2`.execute(h.warehouse.db);
    const lines = (await verify(h.context(), { deep: "all" })).lines;
    expect(notOk(lines)).toEqual(["email_sequences extra (1/2)"]);
    expect(lines.find((line) => line.stream === "email_sequences")?.extraKeys).toEqual({ count: 1, first: ["2"] });
  });
});
