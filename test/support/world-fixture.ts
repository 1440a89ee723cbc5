import { sql } from "kysely";
import type { AddressInfo } from "node:net";
import { afterEach, expect } from "vitest";
import { buildApp } from "../../src/emulator/app.ts";
import { WallClock } from "../../src/emulator/clock.ts";
import { PageDrift } from "../../src/emulator/drift/pages.ts";
import { RecordDrift } from "../../src/emulator/drift/records.ts";
import { FaultInjector } from "../../src/emulator/faults.ts";
import { RateLimiter } from "../../src/emulator/http/rate-limit.ts";
import { emulatorOptions, runtimeSettings } from "../../src/emulator/options.ts";
import { seedWorld } from "../../src/emulator/seed/generate.ts";
import { advance } from "../../src/emulator/simulate.ts";
import { groundTruth } from "../../src/emulator/store/truth.ts";
import { World, type Account } from "../../src/emulator/store/world.ts";
import type { RunningEmulator } from "../../src/emulator/server.ts";
import type { Rhythm } from "../../src/sync/campaign-sync.ts";
import { runCampaignSync, runDiscovery } from "../../src/sync/runs.ts";
import { verify } from "../../src/sync/verify.ts";
import { useTestDatabase } from "./database.ts";
import { attachWarehouse, TEST_KEY, type SyncFixture } from "./sync.ts";

/**
 * An emulator whose store the test holds (the small seed), with a warehouse attached: a test changes the
 * upstream between syncs through the store's own operations, then checks that the warehouse converges on the
 * ground truth, verify finds nothing, and campaign history stays one contiguous row per state.
 */

export interface WorldFixture extends SyncFixture {
  world: World;
  account: Account;
}

async function openWorld(databaseUrl: string, schema: string): Promise<WorldFixture> {
  const config = emulatorOptions.parse({ seed: 5, scale: "small", apiKeys: [TEST_KEY], faults: "none" });
  const world = new World(config.seed);
  seedWorld(world, config.apiKeys, config.scale);
  const settings = runtimeSettings.parse(config);
  const clock = new WallClock(world, settings);
  const context = { world, settings, faults: new FaultInjector(config.seed), recordDrift: new RecordDrift(config.seed), pageDrift: new PageDrift(config.seed), rateLimiter: new RateLimiter(), clock };
  const app = await buildApp(context, false);
  await app.listen({ host: "127.0.0.1", port: 0 });
  const { port } = app.server.address() as AddressInfo;
  const emulator: RunningEmulator = {
    url: `http://127.0.0.1:${port}`,
    settings,
    truth: (key) => groundTruth(world, world.accounts.get(key)!),
    driftOf: () => [],
    advance: (seconds) => advance(world, seconds),
    close: async () => {
      clock.stop();
      await app.close();
    },
  };
  const attached = await attachWarehouse(emulator, databaseUrl, schema);
  return {
    ...attached,
    emulator,
    world,
    account: world.accounts.get(TEST_KEY)!,
    close: async () => {
      await attached.close();
      await emulator.close();
    },
  };
}

/** A test file's worlds, in a database of its own (`label`): each test opens one, closed after it. */
export function useWorlds(label: string): (schema: string) => Promise<WorldFixture> {
  const databaseUrl = useTestDatabase(label);
  let open: WorldFixture | undefined;
  afterEach(async () => {
    await open?.close();
    open = undefined;
  });
  return async (schema) => (open = await openWorld(databaseUrl(), schema));
}

export async function problems(f: WorldFixture) {
  const result = await verify(f.context(), { deep: "all", values: true });
  return result.lines.filter((line) => line.status !== "ok").map((line) => ({ c: line.campaignUid, s: line.stream, t: line.table, st: line.status, m: line.missingKeys, x: line.extraKeys, d: line.differingKeys, cols: line.columns }));
}

export async function historyProblems(f: WorldFixture) {
  const out: string[] = [];
  const db = f.warehouse.db;
  const rows = await sql<{ campaign_uid: string; valid_from: Date; valid_to: Date | null; status: string; settings: unknown }>`select campaign_uid, valid_from, valid_to, status, settings from campaign_history order by campaign_uid, valid_from`.execute(db);
  const by = new Map<string, typeof rows.rows>();
  for (const r of rows.rows) by.set(r.campaign_uid, [...(by.get(r.campaign_uid) ?? []), r]);
  const live = await sql<{ uid: string; status: string; deleted: boolean }>`select uid, status, _deleted_at is not null as deleted from campaigns`.execute(db);
  for (const c of live.rows) {
    const h = by.get(c.uid) ?? [];
    if (h.length === 0) out.push(`${c.uid}: no history`);
    for (let i = 0; i + 1 < h.length; i++) {
      if (h[i]!.valid_to?.getTime() !== h[i + 1]!.valid_from.getTime()) out.push(`${c.uid}: gap/overlap at ${i}`);
      if (h[i]!.status === h[i + 1]!.status && JSON.stringify(h[i]!.settings) === JSON.stringify(h[i + 1]!.settings)) out.push(`${c.uid}: duplicate version at ${i}`);
    }
    const open = h.filter((r) => r.valid_to === null);
    if (open.length !== 1) out.push(`${c.uid}: ${open.length} open rows`);
    if (!c.deleted && open[0] && open[0].status !== c.status) out.push(`${c.uid}: open history status ${open[0].status} vs row ${c.status}`);
  }
  return out;
}

export async function upstreamStatuses(f: WorldFixture) {
  const map: Record<string, string> = {};
  for (const c of f.account.campaigns.items) map[c.uid] = c.status;
  const rows = await sql<{ uid: string; status: string }>`select uid, status from campaigns where _deleted_at is null`.execute(f.warehouse.db);
  const held: Record<string, string> = {};
  for (const r of rows.rows) held[r.uid] = r.status;
  return { upstream: map, held };
}


export async function cycle(f: WorldFixture, rhythm: Rhythm) {
  const d = await runDiscovery(f.context({ trigger: "worker" }));
  expect(d.outcome).toBe("succeeded");
  for (const c of d.campaigns) {
    const r = await runCampaignSync(f.context({ trigger: "worker" }), c.uid, rhythm);
    expect({ c: c.uid, rhythm, outcome: r.outcome, failures: r.failures.map((x) => x.error.message) }).toEqual({ c: c.uid, rhythm, outcome: "succeeded", failures: [] });
  }
}
