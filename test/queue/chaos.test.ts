import { execFileSync } from "node:child_process";
import { describe, expect, inject, it } from "vitest";
import { reportText, runChaos } from "../../bench/chaos/scenario.ts";

/**
 * The chaos run of `npm run chaos` (README, "Failure modes"), shortened: the
 * small seed, two workers, fewer faults. It needs redis-server on the PATH
 * (it stops and restarts a Redis of its own, never the one the suite uses).
 */

const hasRedisServer = (() => {
  try {
    execFileSync("redis-server", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

describe.skipIf(!hasRedisServer)("a fleet of workers under fire (needs redis-server on the PATH)", () => {
  it("ends with the warehouse equal to the upstream after kills, Redis restarts with and without keys, and dropped PostgreSQL connections", async () => {
    const report = await runChaos({
      databaseUrl: inject("services").databaseUrl,
      seed: 3,
      scale: "small",
      workers: 2,
      kills: 3,
      redisRestarts: 2,
      postgresTerminations: 2,
      restartPostgres: false,
      spacingMs: 2_500,
      settleTimeoutMs: 60_000,
    });
    expect(report.faults).toMatchObject({ kill: 3, "redis-keep": 1, "redis-drop": 1, "postgres-terminate": 2 });
    expect(report.ok, reportText(report)).toBe(true);
    // Outages are logged, not shouted: nothing at error level or above.
    expect((report.linesByLevel["50"] ?? 0) + (report.linesByLevel["60"] ?? 0), reportText(report)).toBe(0);
  }, 150_000);
});
