import { afterEach, describe, expect, it } from "vitest";
import { ByteBudget } from "../../src/sync/byte-budget.ts";
import { runFullSync } from "../../src/sync/runs.ts";
import { useTestDatabase } from "../support/database.ts";
import { openSyncFixture, TEST_KEY, type SyncFixture } from "../support/sync.ts";
import { diffWithTruth, warehouseKeys } from "../support/truth.ts";

describe("ByteBudget", () => {
  it("lets a request through while the pages held are under the limit, and waits for a release once they are not", async () => {
    const budget = new ByteBudget(100);
    const share = budget.share();
    await budget.room();
    share.hold({}, 60);
    await budget.room();
    const page = {};
    share.hold(page, 60);
    let admitted = false;
    const waiting = budget.room().then(() => (admitted = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(admitted).toBe(false);
    share.release(page);
    await waiting;
    expect(budget.held).toBe(60);
  });

  it("lets one page larger than the limit through when nothing is held", async () => {
    const budget = new ByteBudget(10);
    await budget.room();
    budget.share().hold({}, 1_000);
    expect(budget.held).toBe(1_000);
  });

  it("gives back every page of a share on close, and counts none that arrives after", () => {
    const budget = new ByteBudget(10);
    const share = budget.share();
    share.hold({}, 5);
    share.hold({}, 7);
    share.close();
    share.hold({}, 9);
    expect(budget.held).toBe(0);
  });

  it("stops waiting when the caller aborts", async () => {
    const budget = new ByteBudget(1);
    budget.share().hold({}, 1);
    const controller = new AbortController();
    const waiting = budget.room(controller.signal);
    controller.abort(new Error("stop"));
    await expect(waiting).rejects.toThrow("stop");
  });
});

const databaseUrl = useTestDatabase("page_budget");

let fixture: SyncFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

/** A budget that remembers the most pages it held at once. */
class RecordingBudget extends ByteBudget {
  pages = 0;
  mostPages = 0;
  override take(bytes: number): void {
    super.take(bytes);
    this.pages += 1;
    this.mostPages = Math.max(this.mostPages, this.pages);
  }
  override release(bytes: number): void {
    this.pages -= 1;
    super.release(bytes);
  }
}

describe("a full sync under a page budget of one byte", () => {
  it("holds one page per walk at most, lands every record and gives every byte back", async () => {
    fixture = await openSyncFixture(databaseUrl(), "tight_budget", { faults: "hostile", order: "shuffle" });
    const budget = new RecordingBudget(1);
    const summary = await runFullSync(fixture.context({ pageBudget: budget }), { campaignConcurrency: 3 });
    expect(summary.failures.map((failure) => failure.error.message)).toEqual([]);
    expect(summary.outcome).toBe("succeeded");
    expect(diffWithTruth(fixture.emulator.truth(TEST_KEY), await warehouseKeys(fixture.warehouse.db))).toEqual({});
    // Three campaigns at a time, each walk waiting for room before its next page: never the two pages a walk holds unbounded.
    expect(budget.mostPages).toBeGreaterThan(0);
    expect(budget.mostPages).toBeLessThanOrEqual(3);
    expect(budget.held).toBe(0);
  });

  it("is what keeps a walk from holding the next page while it writes one", async () => {
    fixture = await openSyncFixture(databaseUrl(), "one_lane");
    const loose = new RecordingBudget();
    expect((await runFullSync(fixture.context({ pageBudget: loose }), { campaignConcurrency: 1 })).outcome).toBe("succeeded");
    expect(loose.mostPages).toBe(2);
    const tight = new RecordingBudget(1);
    expect((await runFullSync(fixture.context({ pageBudget: tight }), { campaignConcurrency: 1 })).outcome).toBe("succeeded");
    expect(tight.mostPages).toBe(1);
    expect(tight.held).toBe(0);
  });
});
