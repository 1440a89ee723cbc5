import { describe, expect, it } from "vitest";
import { applyLifecycle } from "../../src/emulator/operations.ts";
import { advance } from "../../src/emulator/simulate.ts";
import { runCampaignSync, runDiscovery, runFullSync } from "../../src/sync/runs.ts";
import { TEST_KEY } from "../support/sync.ts";
import { diffWithTruth, warehouseKeys } from "../support/truth.ts";
import { problems, historyProblems, upstreamStatuses, cycle, useWorlds } from "../support/world-fixture.ts";

const openWorld = useWorlds("converge_rhythms");

describe("worker rhythms converge", () => {
  it("events cycles then a leads cycle, over simulated days, end equal to the upstream", async () => {
    const f = await openWorld("conv_rhythms");
    await cycle(f, "all");
    // Thirty simulated hours, an events cycle every two and a leads cycle every six.
    for (let step = 0; step < 15; step++) {
      advance(f.world, 7200);
      await cycle(f, "events");
      if (step % 3 === 2) await cycle(f, "leads");
    }
    await cycle(f, "leads");
    await cycle(f, "events");
    expect(diffWithTruth(f.emulator.truth(TEST_KEY), await warehouseKeys(f.warehouse.db))).toEqual({});
    const s = await upstreamStatuses(f);
    expect(s.held).toEqual(s.upstream);
    expect(await historyProblems(f)).toEqual([]);
    expect(await problems(f)).toEqual([]);
  }, 300_000);

  it("running -> paused -> running across syncs: three contiguous history versions", async () => {
    const f = await openWorld("conv_pause");
    await runFullSync(f.context());
    const c = f.account.campaigns.items.find((x) => x.status === "running")!;
    applyLifecycle(f.world, c, "pause");
    await runFullSync(f.context());
    applyLifecycle(f.world, c, "resume");
    await runFullSync(f.context());
    const h = (await f.warehouse.db.selectFrom("campaign_history").select(["status", "valid_from", "valid_to", "settings"]).where("campaign_uid", "=", c.uid).orderBy("valid_from").execute()).filter((r) => (r.settings as { daily_email_limit: unknown }).daily_email_limit !== null);
    expect(h.map((r) => r.status)).toEqual(["running", "paused", "running"]);
    expect(h[0]!.valid_to).toEqual(h[1]!.valid_from);
    expect(h[1]!.valid_to).toEqual(h[2]!.valid_from);
    expect(h[2]!.valid_to).toBeNull();
    // A -> B -> A between two syncs: nothing new
    applyLifecycle(f.world, c, "pause");
    applyLifecycle(f.world, c, "resume");
    await runFullSync(f.context());
    expect(await f.warehouse.db.selectFrom("campaign_history").select("status").where("campaign_uid", "=", c.uid).execute()).toHaveLength(4);
    expect(await historyProblems(f)).toEqual([]);
  }, 120_000);

  it("pause via the leads rhythm and resume seen first by discovery: history stays consistent", async () => {
    const f = await openWorld("conv_pause2");
    await cycle(f, "all");
    const c = f.account.campaigns.items.find((x) => x.status === "running")!;
    applyLifecycle(f.world, c, "pause");
    await runCampaignSync(f.context({ trigger: "worker" }), c.uid, "leads");
    applyLifecycle(f.world, c, "resume");
    await runDiscovery(f.context({ trigger: "worker" }));
    await runCampaignSync(f.context({ trigger: "worker" }), c.uid, "events");
    applyLifecycle(f.world, c, "pause");
    await runCampaignSync(f.context({ trigger: "worker" }), c.uid, "leads");
    await runDiscovery(f.context({ trigger: "worker" }));
    const h = (await f.warehouse.db.selectFrom("campaign_history").select(["status", "valid_from", "valid_to", "settings"]).where("campaign_uid", "=", c.uid).orderBy("valid_from").execute()).filter((r) => (r.settings as { daily_email_limit: unknown }).daily_email_limit !== null);
    expect(h.map((r) => r.status)).toEqual(["running", "paused", "running", "paused"]);
    expect(await historyProblems(f)).toEqual([]);
    const s = await upstreamStatuses(f);
    expect(s.held).toEqual(s.upstream);
  }, 120_000);
});

