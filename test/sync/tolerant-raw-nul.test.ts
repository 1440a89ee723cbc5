import { describe, expect, it } from "vitest";
import { runFullSync } from "../../src/sync/runs.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";

/**
 * README, "When the upstream deviates": a raw control character inside a string (which JSON refuses) is read as if
 * escaped, and text holding a NUL is stored with U+FFFD in its place and named. A hand-built writer that puts a
 * raw NUL byte (U+0000 is a control character too) into one field of one lead must therefore cost nothing: the
 * NUL reaches the value through the "read as if escaped" path, though the answer's text held no `\u0000` escape,
 * which was all that asked for the careful read (which replaces it): PostgreSQL refused the page, every lead on it.
 */

const CAMPAIGN = "cmp_raw_nul";
const scripted = useScriptedCampaigns(useTestDatabase("tolerant_raw_nul"), CAMPAIGN);

describe("a raw NUL byte inside one string of one lead", () => {
  it("keeps every lead of the page, the NUL replaced and named, the run not failed on it", async () => {
    const h = await scripted({ status: "running", leads: 2, sentOn: "2026-05-01T10:00:00.000Z" });
    // Only the first lead's sender_name holds the raw byte (the second lead's is untouched: the replace takes the first).
    h.upstream.rewriteText = (text) => text.replace('"sender_name":"Sender"', '"sender_name":"Sen\u0000der"');

    const summary = await runFullSync(h.context());

    const db = h.warehouse.db;
    const leads = await db.selectFrom("leads").select(["uid", "sender_name", "_field_issues"]).orderBy("uid").execute();
    const runs = await db.selectFrom("sync_runs").select(["outcome", "errors"]).execute();
    expect({ leads: leads.map((row) => row.uid), errors: runs[0]?.errors }).toEqual({ leads: ["L1", "L2"], errors: [] });
    expect(leads[0]?.sender_name).toBe("Sen\uFFFDder");
    expect(leads[0]?._field_issues).toMatchObject({ leads: { sender_name: { raw: "Sen\\u0000der" } } });
    expect(summary.outcome).toBe("succeeded");
  });
});
