import type { EmulatorOptionsInput } from "../../src/emulator/options.ts";
import { startEmulator, type RunningEmulator } from "../../src/emulator/server.ts";
import { createLogger } from "../../src/logger.ts";
import type { SyncContext } from "../../src/sync/context.ts";
import { UpstreamClient } from "../../src/upstream/client.ts";
import { openWarehouse, type Warehouse } from "../../src/warehouse/connect.ts";
import { migrateToLatest } from "../../src/warehouse/migrate.ts";
import { startDeviatingProxy, type Rewrite } from "./deviating-proxy.ts";

/** An emulator, a migrated warehouse schema of its own and a sync context between them. */
export interface SyncFixture {
  emulator: RunningEmulator;
  warehouse: Warehouse;
  client: UpstreamClient;
  context(overrides?: Partial<SyncContext>): SyncContext;
  close(): Promise<void>;
}

export const TEST_KEY = "sync-test-key";

export async function openSyncFixture(databaseUrl: string, schema: string, emulatorOptions: EmulatorOptionsInput = {}): Promise<SyncFixture> {
  const emulator = await startEmulator({ seed: 5, scale: "small", apiKeys: [TEST_KEY], slowMs: 30, ...emulatorOptions });
  const attached = await attachWarehouse(emulator, databaseUrl, schema);
  return {
    ...attached,
    close: async () => {
      await attached.close();
      await emulator.close();
    },
  };
}

/** A sync fixture whose emulator is also read through a proxy that rewrites its answers (`deviating`, a client of the proxy). */
export interface DeviatingFixture extends SyncFixture {
  deviating: UpstreamClient;
}

export async function openDeviatingFixture(databaseUrl: string, schema: string, rewrite: Rewrite): Promise<DeviatingFixture> {
  const fixture = await openSyncFixture(databaseUrl, schema);
  const proxy = await startDeviatingProxy(fixture.emulator.url, rewrite);
  const deviating = new UpstreamClient({ baseUrl: proxy.url, apiKey: TEST_KEY, requestsPerSecond: 1_000, concurrency: 8 });
  return {
    ...fixture,
    deviating,
    close: async () => {
      await deviating.close();
      await proxy.close();
      await fixture.close();
    },
  };
}

/** A migrated warehouse schema and a fast client on an emulator that is already running; close() leaves the emulator running. */
export async function attachWarehouse(emulator: RunningEmulator, databaseUrl: string, schema: string): Promise<SyncFixture> {
  const warehouse = await openWarehouse({ databaseUrl, dataDir: ".coldsync", schema });
  await migrateToLatest(warehouse);
  const client = new UpstreamClient({
    baseUrl: emulator.url,
    apiKey: TEST_KEY,
    requestsPerSecond: 2_000,
    concurrency: 8,
    // Long enough that no attempt is abandoned on a busy machine: an abandoned request is still served, and a fault it
    // draws would change the data after the sync read it, which the tests then compare with.
    timeoutMs: 10_000,
    maxRetries: 12,
    retryBaseMs: 2,
    retryCapMs: 40,
  });
  const logger = createLogger({ level: "silent" });
  return {
    emulator,
    warehouse,
    client,
    context: (overrides = {}) => ({ client, db: warehouse.db, account: "acme", logger, trigger: "cli", locks: warehouse.locks, ...overrides }),
    close: async () => {
      await client.close();
      await warehouse.destroy();
    },
  };
}
