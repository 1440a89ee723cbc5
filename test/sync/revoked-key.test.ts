import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runFullSync } from "../../src/sync/runs.ts";
import { UpstreamClient } from "../../src/upstream/client.ts";
import { useTestDatabase } from "../support/database.ts";
import { openSyncFixture, type SyncFixture } from "../support/sync.ts";

/**
 * A revoked API key (401) is account-wide: nothing the run asks for afterwards can succeed. `sync --once`
 * (runFullSync) must stop at the first 401 instead of asking for every stream of every campaign the warehouse holds
 * (the small seed's 83 requests; thousands on a real account at COLDSYNC_RATE_LIMIT, each printed as a failure).
 */

const databaseUrl = useTestDatabase("revoked_key");
let fixture: SyncFixture;
beforeAll(async () => {
  fixture = await openSyncFixture(databaseUrl(), "revoked_key");
});
afterAll(() => fixture.close());

describe("a key revoked after the warehouse was filled", () => {
  it("stops the run at the first 401 instead of asking for every stream of every campaign", async () => {
    const filled = await runFullSync(fixture.context());
    expect(filled.outcome).toBe("succeeded");

    const statuses: number[] = [];
    const revoked = new UpstreamClient({
      baseUrl: fixture.emulator.url,
      apiKey: "revoked-key-0000000",
      requestsPerSecond: 2_000,
      concurrency: 8,
      hooks: { onResponse: (event) => statuses.push(event.status) },
    });
    try {
      const summary = await runFullSync(fixture.context({ client: revoked }));

      expect(summary.outcome).toBe("failed");
      expect(new Set(statuses)).toEqual(new Set([401]));
      expect(statuses.length).toBeLessThanOrEqual(4);
      expect(summary.failures.length).toBeLessThanOrEqual(4);
    } finally {
      await revoked.close();
    }
  });
});
