import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { runDiscovery } from "../../src/sync/runs.ts";
import { discoveryLockName } from "../../src/warehouse/run-locks.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";

const databaseUrl = useTestDatabase("discovery_lock");
const scripted = useScriptedCampaigns(databaseUrl, "cmp_discovery");

describe("two discoveries of one account at once", () => {
  it("run one after the other, so an older answer about a workspace never overwrites a newer one", async () => {
    const h = await scripted({ status: "running", leads: 1 });
    const context = h.context({ locks: h.warehouse.locks });
    await runDiscovery(context);
    const workspace = h.upstream.state.workspaces[0] as { credits_remaining: number };
    workspace.credits_remaining = 100;
    let deliverFirst: () => void = () => undefined;
    const firstDelivered = new Promise<void>((resolve) => (deliverFirst = resolve));
    let firstServed: () => void = () => undefined;
    const servedFirst = new Promise<void>((resolve) => (firstServed = resolve));
    let workspaceReads = 0;
    h.upstream.hook = async ({ path }) => {
      if (path !== "/api/v1/workspaces/" || (workspaceReads += 1) > 1) return undefined;
      // The first discovery's answer is taken now (100 credits) and arrives late.
      const body = structuredClone(h.upstream.state.workspaces);
      firstServed();
      await firstDelivered;
      return { status: 200, body };
    };
    const first = runDiscovery(context);
    await servedFirst;
    workspace.credits_remaining = 90;
    const second = runDiscovery(context);
    // Side by side, the second would finish here and the late first answer would then overwrite it.
    await Promise.race([second, sleep(500)]);
    deliverFirst();
    expect((await first).outcome).toBe("succeeded");
    expect((await second).outcome).toBe("succeeded");
    const row = await h.warehouse.db.selectFrom("workspaces").select("credits_remaining").executeTakeFirstOrThrow();
    expect(row.credits_remaining).toBe(90);
    const history = await h.warehouse.db.selectFrom("workspace_history").select("credits_remaining").orderBy("valid_from").execute();
    expect(history.map((entry) => entry.credits_remaining).slice(-2)).toEqual([100, 90]);
  });

  it("stops waiting for the lock when the run is asked to stop", async () => {
    const h = await scripted({ status: "running", leads: 1 });
    const locks = h.warehouse.locks;
    const elsewhere = await locks.acquire([discoveryLockName("acme")]);
    expect(elsewhere).not.toBeNull();
    const stop = new AbortController();
    const waiting = runDiscovery(h.context({ locks, signal: stop.signal }));
    await sleep(300);
    stop.abort();
    expect((await waiting).outcome).toBe("aborted");
    await elsewhere?.release();
  });
});
