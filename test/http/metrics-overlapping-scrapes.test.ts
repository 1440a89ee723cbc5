import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMetrics, METRIC_NAMES, type WorkerMetrics } from "../../src/http/metrics.ts";
import type { Warehouse } from "../../src/warehouse/connect.ts";
import { useTestDatabase } from "../support/database.ts";
import { openMigratedWarehouse } from "../queue/warehouse.ts";

/**
 * Two scrapes of /metrics that overlap (a Prometheus HA pair scraping the same worker, or a scrape and a
 * curl by an operator) must each see the last verification as it is: two missing lines are 2, not 4.
 */

const databaseUrl = useTestDatabase("metrics_scrapes");
let warehouse: Warehouse;
let metrics: WorkerMetrics;

beforeAll(async () => {
  warehouse = await openMigratedWarehouse(databaseUrl());
  metrics = createMetrics();
  metrics.watchCheckpoints({ db: warehouse.db, account: "acme" });
  const at = new Date(Date.now() - 60_000);
  await warehouse.db
    .insertInto("verifications")
    .values({
      account: "acme",
      trigger: "worker",
      started_at: at,
      finished_at: at,
      checks: 9,
      problems: 2,
      requests: 40,
      lines: JSON.stringify([
        { campaignUid: "c-1", stream: "leads", status: "missing" },
        { campaignUid: "c-2", stream: "leads", status: "missing" },
      ]),
    })
    .execute();
});

afterAll(async () => {
  await warehouse.destroy();
});

const problemsIn = (text: string): number | undefined => {
  const match = new RegExp(`^${METRIC_NAMES.verifyProblems}\\{stream="leads",check="missing"\\} (\\d+)$`, "m").exec(text);
  return match ? Number(match[1]) : undefined;
};

describe("coldsync_verify_problems under overlapping scrapes", () => {
  it("reads 2 on a scrape alone", async () => {
    expect(problemsIn(await metrics.registry.metrics())).toBe(2);
  });

  it("reads 2 on each of two scrapes that overlap", async () => {
    const [first, second] = await Promise.all([metrics.registry.metrics(), metrics.registry.metrics()]);
    expect([problemsIn(first), problemsIn(second)]).toEqual([2, 2]);
  });
});
