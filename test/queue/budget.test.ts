import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { leadPages, requestDemand, shortfallOf } from "../../src/queue/budget.ts";
import type { Cadence } from "../../src/queue/cadence.ts";
import type { Warehouse } from "../../src/warehouse/connect.ts";
import { upsert } from "../../src/warehouse/upsert.ts";
import { useTestDatabase } from "../support/database.ts";
import { openMigratedWarehouse } from "./warehouse.ts";

const MINUTE = 60_000;
const cadence: Cadence = { activeEveryMs: 15 * MINUTE, idleEveryMs: 60 * MINUTE, terminalEveryMs: 24 * 60 * MINUTE, eventsEveryMs: MINUTE, discoverEveryMs: 5 * MINUTE };

describe("the request budget", () => {
  it("counts lead pages as a walk makes them: anchored pages of 99 new leads after the first", () => {
    expect([0, 99, 100, 198, 199, 250].map(leadPages)).toEqual([1, 1, 2, 2, 3, 3]);
  });

  it("names the events cadence when the budget cannot cover even the events", () => {
    expect(shortfallOf({ eventsPerMinute: 450, leadsPerMinute: 100, budgetPerMinute: 300 })).toMatch(/^the events cadence needs 450 requests a minute, more than the budget of 300: events are read about 1\.5x slower/);
  });

  it("names the leads cadences when only what remains after the events falls short", () => {
    expect(shortfallOf({ eventsPerMinute: 200, leadsPerMinute: 250, budgetPerMinute: 300 })).toMatch(/^the leads cadences need 250 requests a minute, but 100 of the budget of 300 remain after the events: leads walks run about 2\.5x slower/);
    expect(shortfallOf({ eventsPerMinute: 100, leadsPerMinute: 150, budgetPerMinute: 300 })).toBeUndefined();
  });

  describe("requestDemand", () => {
    const databaseUrl = useTestDatabase("budget");
    let warehouse: Warehouse;
    const now = new Date("2026-03-01T12:00:00Z");

    beforeAll(async () => {
      warehouse = await openMigratedWarehouse(databaseUrl());
      const campaign = (uid: string, status: string, started: boolean) => ({
        uid,
        _account: "acme",
        name: uid,
        workspace_id: 1,
        created_on: now,
        status,
        started_running_at: started ? now : null,
        _observed_at: now,
      });
      await upsert(warehouse.db, "campaigns", [campaign("running", "running", true), campaign("created", "created", false), campaign("done", "complete", true)], now);
      await upsert(
        warehouse.db,
        "leads",
        Array.from({ length: 150 }, (_, index) => ({ uid: `l${index}`, campaign_uid: "running", contact_id: index, sender_email_address: "s@x", sender_name: "S" })),
        now,
      );
    });
    afterAll(async () => {
      await warehouse.destroy();
    });

    it("sums each rhythm's requests per cycle over its cadence", async () => {
      const demand = await requestDemand(warehouse.db, "acme", cadence, 5);
      // Events: 3 a minute for the running campaign, 3 a day for the finished one; the created one has none.
      expect(demand.eventsPerMinute).toBeCloseTo(3 + 3 / 1440, 6);
      // Leads: running (1 + 2 pages) every 15 minutes, created (1 + 1 page) every hour, done (its detail) every day.
      expect(demand.leadsPerMinute).toBeCloseTo(3 / 15 + 2 / 60 + 1 / 1440, 6);
      expect(demand.budgetPerMinute).toBe(300);
      const off = await requestDemand(warehouse.db, "acme", { ...cadence, eventsEveryMs: undefined }, 5);
      expect(off.eventsPerMinute).toBe(0);
      expect(off.leadsPerMinute).toBeCloseTo(6 / 15 + 2 / 60 + 4 / 1440, 6);
      // A terminal campaign's leads walked again every week: its page (no lead, no sequence) once a week.
      const rewalked = await requestDemand(warehouse.db, "acme", { ...cadence, terminalRewalkEveryMs: 7 * 1440 * MINUTE }, 5);
      expect(rewalked.leadsPerMinute).toBeCloseTo(3 / 15 + 2 / 60 + 1 / 1440 + 1 / (7 * 1440), 6);
    });
  });
});
