import { describe, expect, it } from "vitest";
import { recordsFinalLeadsWalk } from "../../src/sync/campaign-sync.ts";
import { runFullSync } from "../../src/sync/runs.ts";
import { verify, type VerifyLine } from "../../src/sync/verify.ts";
import type { Lead } from "../../src/upstream/resources.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";

/** A stream whose last proof saw a page repeat a record is compared by key: once the upstream stops repeating it, nothing is named. */

const databaseUrl = useTestDatabase("verify_stale_repeats");
const CAMPAIGN = "cmp_done";
const scripted = useScriptedCampaigns(databaseUrl, CAMPAIGN);

const notOk = (lines: VerifyLine[]) => lines.filter((line) => line.status !== "ok").map((line) => `${line.stream} ${line.status} (${line.upstream}/${line.warehouse})`);

describe("a terminal campaign's leads whose last proof counted a repeated copy", () => {
  it("once the upstream stops repeating a lead, a warehouse that holds exactly its leads is not named extra (and no sync can clear it)", async () => {
    const h = await scripted({ status: "complete", leads: 3, sentOn: "2026-05-01T09:05:00.000Z" });
    const leads = h.upstream.state.leads.get(CAMPAIGN) as Lead[];
    // The upstream's leads page lists L1 twice (total 4): the sync names it leads.duplicate; the proof counts 1 copy.
    leads.splice(1, 0, structuredClone(leads[0] as Lead));
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    const checkpoint = await h.warehouse.db.selectFrom("sync_checkpoints").select(["state", "last_complete_scan_at"]).where("stream", "=", "leads").executeTakeFirstOrThrow();
    expect(recordsFinalLeadsWalk(checkpoint)).toBe(true);
    expect(notOk((await verify(h.context())).lines)).toEqual([]);

    // The upstream stops repeating L1: it lists L1, L2, L3, total 3 — exactly the three leads the warehouse holds.
    leads.splice(1, 1);
    // The operator syncs, as the README says to before verifying again; both runs succeed.
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    const live = await h.warehouse.db.selectFrom("leads").select("uid").where("_deleted_at", "is", null).orderBy("uid").execute();
    expect(live.map((row) => row.uid)).toEqual(["L1", "L2", "L3"]);
    expect(notOk((await verify(h.context())).lines)).toEqual([]);
  });
});
