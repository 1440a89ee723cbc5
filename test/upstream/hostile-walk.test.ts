import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UpstreamClient } from "../../src/upstream/client.ts";
import { useEmulator } from "../support/emulator.ts";
import { memoryLogger } from "./support.ts";
import { sorted, walkAccount, type AccountWalk, type Entity } from "./walk.ts";

/**
 * A full walk of a seeded account while the emulator answers 5xx, 429, HTML
 * pages, cut bodies, slow answers and empty pages, and inserts and deletes
 * records between page requests, in shuffled order: the client must still see
 * exactly what the emulator holds.
 */

const KEY = "client-hostile-5d21c7";
const emulator = useEmulator({ apiKeys: [KEY], seed: 43, admin: true });
const { logger, lines } = memoryLogger();
const retryErrors: string[] = [];
let client: UpstreamClient;
let walk: AccountWalk;

beforeAll(async () => {
  Object.assign(emulator().settings, { faults: "hostile", slowMs: 150, order: "shuffle" });
  client = new UpstreamClient({
    baseUrl: emulator().url,
    apiKey: KEY,
    requestsPerSecond: 1_000,
    // Long enough that no attempt is abandoned on a busy machine: an abandoned request is still served, and a delete
    // fault it draws would change the data after the walk read it, which no walk can see.
    timeoutMs: 10_000,
    maxRetries: 12,
    pageSize: 25,
    retryBaseMs: 5,
    retryCapMs: 50,
    logger,
    hooks: { onRetry: (event) => retryErrors.push(event.error) },
  });
  try {
    // A campaign's listings are read again while a fault moved one of them (about one listing request in twelve
    // inserts or deletes a record): a campaign of many pages needs a round without one, which ten rounds did not
    // always give on a loaded machine.
    walk = await walkAccount(client, 40);
  } finally {
    emulator().settings.faults = "none";
  }
}, 90_000);

afterAll(async () => {
  await client.close();
});

describe("a full walk under hostile faults", () => {
  it("met faults and retried through them", () => {
    expect(client.stats.retries).toBeGreaterThan(0);
    expect(retryErrors.some((error) => /429/.test(error))).toBe(true);
    expect(retryErrors.some((error) => /5\d\d/.test(error))).toBe(true);
  });

  it("sees exactly the records the emulator holds, each once, in the settled readings", () => {
    const truth = emulator().truth(KEY);
    for (const entity of Object.keys(walk.settled) as Entity[]) {
      expect(sorted(walk.settled[entity]), `${entity} settled`).toEqual(sorted(truth.keys[entity]));
      // Records deleted upstream during the walk may have been seen before they went; none held was missed.
      const seen = walk.everSeen[entity];
      expect(truth.keys[entity].filter((key) => !seen.has(key)), `${entity} never seen`).toEqual([]);
    }
    expect(walk.rejected).toBe(0);
  });

  it("never wrote the key into a log line or an error message", () => {
    expect(lines.length).toBeGreaterThanOrEqual(client.stats.requests);
    expect(lines.join("")).not.toContain(KEY);
    expect(retryErrors.join("")).not.toContain(KEY);
  });
});
