import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCheckpoint } from "../../src/sync/checkpoints.ts";
import { runCampaignSync } from "../../src/sync/runs.ts";
import { useTestDatabase } from "../support/database.ts";
import { openSyncFixture, TEST_KEY, type SyncFixture } from "../support/sync.ts";

/**
 * PostgreSQL drops the connection in the middle of a page (issue 11): the
 * backend that writes the page's checkpoint terminates itself, after the
 * page's rows were written in the same transaction. Nothing of that page may
 * stay, nothing before it may go, no process may die, and the next run must
 * finish the campaign.
 */

const databaseUrl = useTestDatabase("pgoutage");
let fixture: SyncFixture;

beforeAll(async () => {
  // The busy seed's campaigns hold 50-150 leads: some take two pages.
  fixture = await openSyncFixture(databaseUrl(), "pgoutage", { seed: 4, scale: "busy" });
  // Armed, it fires on the checkpoint of a leads walk's second page.
  await sql`CREATE TABLE outage_switch (armed boolean NOT NULL)`.execute(fixture.warehouse.db);
  await sql`INSERT INTO outage_switch VALUES (true)`.execute(fixture.warehouse.db);
  await sql`CREATE FUNCTION terminate_mid_page() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.stream = 'leads' AND NEW.cursor_offset > 100 AND (SELECT armed FROM outage_switch) THEN
        PERFORM pg_terminate_backend(pg_backend_pid());
      END IF;
      RETURN NEW;
    END $$`.execute(fixture.warehouse.db);
  await sql`CREATE TRIGGER terminate_mid_page BEFORE INSERT OR UPDATE ON sync_checkpoints
    FOR EACH ROW EXECUTE FUNCTION terminate_mid_page()`.execute(fixture.warehouse.db);
});
afterAll(() => fixture.close());

describe("PostgreSQL terminates the connection while a page is written", () => {
  it("keeps the pages before it and nothing of it, and the next run finishes the campaign", async () => {
    const totals = await Promise.all(
      fixture.emulator.truth(TEST_KEY).keys.campaigns.map(async (uid) => ({ uid, total: (await fixture.client.page("leads", { campaignUid: uid, offset: 0, limit: 1 })).total ?? 0 })),
    );
    const campaign = totals.find((candidate) => candidate.total > 110);
    expect(campaign, "a campaign with two pages of leads").toBeDefined();
    const { uid, total } = campaign as { uid: string; total: number };
    const db = fixture.warehouse.db;
    const leadsHeld = async () => Number((await db.selectFrom("leads").select(db.fn.countAll().as("n")).where("campaign_uid", "=", uid).executeTakeFirstOrThrow()).n);

    const interrupted = await runCampaignSync(fixture.context(), uid, "leads");
    expect(interrupted.outcome).not.toBe("succeeded");
    expect(interrupted.failures.map((failure) => ({ stream: failure.stream, error: String(failure.error) }))).toEqual([
      { stream: "leads", error: expect.stringMatching(/terminating connection|Connection terminated/) },
    ]);
    const checkpoint = await loadCheckpoint(db, { account: "acme", campaignUid: uid, stream: "leads" });
    // The first page and its checkpoint committed; the second page's rows went with its checkpoint.
    expect(checkpoint.cursorOffset).toBeGreaterThan(0);
    expect(checkpoint.cursorOffset).toBeLessThanOrEqual(100);
    expect(await leadsHeld()).toBe(checkpoint.cursorOffset);

    await sql`UPDATE outage_switch SET armed = false`.execute(db);
    const resumed = await runCampaignSync(fixture.context(), uid, "leads");
    expect(resumed.outcome).toBe("succeeded");
    expect(await leadsHeld()).toBe(total);
  });
});
