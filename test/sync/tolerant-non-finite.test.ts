import { describe, expect, it } from "vitest";
import { runFullSync } from "../../src/sync/runs.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";

/**
 * Python's json.dumps (allow_nan, its default), and so Flask, FastAPI's default encoder and many hand-rolled
 * services, writes a float that is NaN or infinite as the bare tokens `NaN`, `Infinity`, `-Infinity`, which JSON
 * refuses. One such field must not cost the answer (every lead of the page, and every page after it): it is read
 * as the deviating value it is, stored NULL and named.
 */

const CAMPAIGN = "cmp_nan";
const scripted = useScriptedCampaigns(useTestDatabase("tolerant_non_finite"), CAMPAIGN);

describe.each(["NaN", "Infinity", "-Infinity"])("a leads page in which one schedule's email_open_count is %s", (token) => {
  it("lands every lead, the deviating field NULL and named on its schedule, instead of failing the stream", async () => {
    const h = await scripted({ status: "running", leads: 3, sentOn: "2026-05-01T10:00:00.000Z" });
    // L1's schedule (1001) comes first in the page: only its count is rewritten.
    h.upstream.rewriteText = (text) => text.replace('"email_open_count":0', `"email_open_count":${token}`);

    const summary = await runFullSync(h.context());

    const leads = await h.warehouse.db.selectFrom("leads").select("uid").orderBy("uid").execute();
    expect({ leads: leads.map((row) => row.uid), failures: summary.failures }).toEqual({ leads: ["L1", "L2", "L3"], failures: [] });
    const schedule = await h.warehouse.db.selectFrom("schedules").select(["email_open_count", "_field_issues"]).where("id", "=", 1001).executeTakeFirstOrThrow();
    expect(schedule.email_open_count).toBeNull();
    expect(Object.keys((schedule._field_issues as Record<string, Record<string, unknown>>).leads ?? {})).toContain("email_open_count");
  });
});
