import { describe, expect, it } from "vitest";
import { runFullSync } from "../../src/sync/runs.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";

/**
 * A date-time with seven fraction digits (.NET's round-trip format, `2026-05-01T10:00:00.1234567Z`) is rounded to
 * the microsecond the warehouse holds: the value stored is not the one sent, so it is named. README: "keep the
 * value, say what was wrong"; only extra digits that change nothing (`.123000Z`) are "stored as it came, and not
 * named".
 */

const CAMPAIGN = "cmp_sub_microsecond";
const scripted = useScriptedCampaigns(useTestDatabase("tolerant_sub_microsecond"), CAMPAIGN);

describe("a date-time more precise than the warehouse holds", () => {
  it("names the rounded field on the row and the run, not only stores the rounded instant", async () => {
    const h = await scripted({ status: "running", leads: 1, sentOn: "2026-05-01T10:00:00.000Z" });
    h.upstream.state.opens.set(CAMPAIGN, [{ schedule_id: 1001, opened_on: "2026-05-01T10:00:00.1234567Z" }]);

    const summary = await runFullSync(h.context());

    const open = await h.warehouse.db.selectFrom("email_opens").select("_field_issues").executeTakeFirstOrThrow();
    expect({ outcome: summary.outcome, named: summary.fieldIssues["email_opens.opened_on"] ?? 0 }).toEqual({ outcome: "succeeded", named: 1 });
    expect(open._field_issues).toMatchObject({ email_opens: { opened_on: { raw: "2026-05-01T10:00:00.1234567Z" } } });
  });
});
