import { describe, expect, it } from "vitest";
import { applyLifecycle, deleteSequence, updateCampaign } from "../../src/emulator/operations.ts";
import { advance } from "../../src/emulator/simulate.ts";
import { removeCampaign, removeClick, removeLead, removeOpen } from "../../src/emulator/store/removals.ts";
import { runFullSync } from "../../src/sync/runs.ts";
import { TEST_KEY } from "../support/sync.ts";
import { diffWithTruth, warehouseKeys } from "../support/truth.ts";
import { problems, historyProblems, upstreamStatuses, useWorlds } from "../support/world-fixture.ts";

const openWorld = useWorlds("converge");

describe("convergence after upstream changes", () => {
  it("a day of activity, lifecycle changes, settings, deletions: repeated syncs converge on the upstream", async () => {
    const f = await openWorld("conv_broad");
    const first = await runFullSync(f.context());
    expect(first.outcome).toBe("succeeded");

    const campaigns = f.account.campaigns.items;
    const running = campaigns.filter((c) => c.status === "running");
    const created = campaigns.filter((c) => c.status === "created" && c.sequences.length >= 1);
    // pause one running campaign
    applyLifecycle(f.world, running[0]!, "pause");
    // update a created campaign's settings
    if (created[0]) updateCampaign(f.world, f.account, created[0], { ...created[0].settings, daily_email_limit: 7, name: "renamed" } as never);
    // delete a sequence of a created campaign with 2+ sequences
    const multi = campaigns.find((c) => c.status === "created" && c.sequences.length >= 2);
    if (multi) deleteSequence(f.world, f.account, multi.sequences[multi.sequences.length - 1]!);
    // remove a lead of a running campaign
    const withLeads = running.find((c) => c.leads.items.length > 3)!;
    removeLead(f.account, withLeads.leads.items[1]!);
    // remove an open and a click
    const withOpens = campaigns.find((c) => c.opens.items.length > 0);
    if (withOpens) removeOpen(withOpens.opens.items[0]!);
    const withClicks = campaigns.find((c) => c.clicks.items.length > 0);
    if (withClicks) removeClick(withClicks.clicks.items[0]!);
    // remove a complete campaign
    const complete = campaigns.find((c) => c.status === "complete");
    if (complete) removeCampaign(f.account, complete);
    advance(f.world, 86_400);

    for (let i = 0; i < 3; i++) {
      const run = await runFullSync(f.context());
      expect(run.outcome).toBe("succeeded");
    }
    expect(diffWithTruth(f.emulator.truth(TEST_KEY), await warehouseKeys(f.warehouse.db))).toEqual({});
    const s = await upstreamStatuses(f);
    expect(s.held).toEqual(s.upstream);
    expect(await historyProblems(f)).toEqual([]);
    expect(await problems(f)).toEqual([]);
  }, 120_000);
});
