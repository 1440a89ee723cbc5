import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { CampaignBusyError, runCampaignSync, runFullSync } from "../../src/sync/runs.ts";
import { campaignLockName } from "../../src/warehouse/run-locks.ts";
import { holdRequests } from "../support/scripted-upstream.ts";
import { CAMPAIGN, useEngineHarness } from "./engine-harness.ts";

/** Scripted scenarios (engine-harness.ts) of a campaign's runs: timestamps below the millisecond, run locks, a campaign that goes, its sequences. */

const harness = useEngineHarness("engine_runs");

describe("6. timestamps below the millisecond", () => {
  it("keep two opens a few microseconds apart as two rows, and the walk complete", async () => {
    const h = await harness(1);
    h.upstream.state.opens.set(CAMPAIGN, [
      { schedule_id: 1001, opened_on: "2026-05-01T10:00:00.123456Z" },
      { schedule_id: 1001, opened_on: "2026-05-01T10:00:00.123789Z" },
    ]);
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    const opens = await sql<{ opened_on: string }>`select to_char(opened_on at time zone 'UTC', 'HH24:MI:SS.US') as opened_on from email_opens order by opened_on`.execute(h.warehouse.db);
    expect(opens.rows.map((row) => row.opened_on)).toEqual(["10:00:00.123456", "10:00:00.123789"]);
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
  });
});

describe("7. smaller, same spirit", () => {
  it("never lets two processes sync one campaign at once: the second says so and skips it", async () => {
    const h = await harness(10);
    const { reached, release } = holdRequests(h.upstream, "/api/v1/leads/");
    const context = h.context({ locks: h.warehouse.locks });
    const first = runCampaignSync(context, CAMPAIGN, "leads");
    await reached;
    // The same rhythm is refused, and no run row is opened for it; the other rhythm may run beside it.
    await expect(runCampaignSync(h.context({ locks: h.warehouse.locks, trigger: "worker" }), CAMPAIGN, "leads")).rejects.toThrow(CampaignBusyError);
    await expect(runCampaignSync(h.context({ locks: h.warehouse.locks, trigger: "worker" }), CAMPAIGN, "all")).rejects.toThrow(CampaignBusyError);
    expect((await runCampaignSync(h.context({ locks: h.warehouse.locks, trigger: "worker" }), CAMPAIGN, "events")).outcome).toBe("succeeded");
    release();
    expect((await first).outcome).toBe("succeeded");
    expect((await runCampaignSync(h.context({ locks: h.warehouse.locks }), CAMPAIGN)).outcome).toBe("succeeded");
    const runs = await h.warehouse.db.selectFrom("sync_runs").select(["rhythm", "outcome"]).orderBy("id").execute();
    expect(runs).toEqual([
      { rhythm: "leads", outcome: "succeeded" },
      { rhythm: "events", outcome: "succeeded" },
      { rhythm: null, outcome: "succeeded" },
    ]);
  });

  it("holds a campaign's run with one session: the campaign's lock and the lock its run row names", async () => {
    const h = await harness(10);
    const { reached, release } = holdRequests(h.upstream, "/api/v1/leads/");
    const running = runCampaignSync(h.context({ locks: h.warehouse.locks }), CAMPAIGN, "leads");
    await reached;
    const { holder } = await h.warehouse.db.selectFrom("sync_runs").select("holder").where("outcome", "=", "running").executeTakeFirstOrThrow();
    const keys = [campaignLockName("acme", CAMPAIGN, "leads"), holder as string].map((name) => `${h.warehouse.schema}/${name}`);
    const { rows } = await sql<{ key: string; pid: number }>`
      SELECT key, l.pid FROM unnest(CAST(${keys} AS text[])) AS key
        JOIN pg_locks l ON l.locktype = 'advisory' AND l.granted AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended(key, 0)`.execute(h.warehouse.db);
    expect(rows).toHaveLength(2);
    expect(new Set(rows.map((row) => row.pid)).size).toBe(1);
    release();
    expect((await running).outcome).toBe("succeeded");
  });

  it("takes a run's locks all or none: one held elsewhere leaves the others free", async () => {
    const h = await harness(1);
    const [free, taken] = [campaignLockName("acme", CAMPAIGN, "leads"), campaignLockName("acme", CAMPAIGN, "events")];
    const elsewhere = await h.warehouse.locks.acquire([taken]);
    expect(await h.warehouse.locks.acquire([free, taken])).toBeNull();
    expect([...(await h.warehouse.locks.held(h.warehouse.db, [free, taken]))]).toEqual([taken]);
    await elsewhere?.release();
  });

  it("keeps the locks of two warehouses in one database apart: the same campaign syncs in both at once", async () => {
    const [one, other] = [await harness(3), await harness(3)];
    const name = campaignLockName("acme", CAMPAIGN, "leads");
    const held = await one.warehouse.locks.acquire([name]);
    expect(held).not.toBeNull();
    expect(await one.warehouse.locks.acquire([name])).toBeNull();
    const beside = await other.warehouse.locks.acquire([name]);
    expect(beside).not.toBeNull();
    expect([...(await other.warehouse.locks.held(other.warehouse.db, [name]))]).toEqual([name]);
    await beside?.release();
    expect([...(await other.warehouse.locks.held(other.warehouse.db, [name]))]).toEqual([]);
    expect([...(await one.warehouse.locks.held(one.warehouse.db, [name]))]).toEqual([name]);
    await held?.release();
  });

  it("soft-deletes a campaign that vanished upstream together with its leads, schedules and events", async () => {
    const h = await harness(5);
    h.upstream.state.opens.set(CAMPAIGN, [{ schedule_id: 1001, opened_on: "2026-05-01T10:00:00.000Z" }]);
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    h.upstream.state.campaigns.splice(0);
    await runFullSync(h.context());
    const db = h.warehouse.db;
    for (const table of ["campaigns", "leads", "schedules", "email_opens", "email_sequences", "campaign_sending_domains"] as const) {
      const live = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where _deleted_at is null`.execute(db);
      expect({ table, live: live.rows[0]?.n }).toEqual({ table, live: 0 });
    }
  });

  it("fails a run of one campaign that the upstream does not know and the warehouse never held, naming it and writing nothing for it", async () => {
    const h = await harness(2);
    const typo = await runFullSync(h.context(), { campaignUid: "cmp_typo" });
    expect(typo.outcome).toBe("failed");
    expect(typo.failures).toMatchObject([{ campaignUid: "cmp_typo", error: { message: expect.stringMatching(/^no such campaign/) } }]);
    expect(await h.warehouse.db.selectFrom("sync_checkpoints").select("stream").where("campaign_uid", "=", "cmp_typo").execute()).toEqual([]);
    // One the warehouse holds is deleted upstream when it answers 404.
    expect((await runFullSync(h.context(), { campaignUid: CAMPAIGN })).outcome).toBe("succeeded");
    h.upstream.state.campaigns.splice(0);
    expect((await runFullSync(h.context(), { campaignUid: CAMPAIGN })).outcome).toBe("succeeded");
    const held = await h.warehouse.db.selectFrom("campaigns").select("_deleted_at").where("uid", "=", CAMPAIGN).executeTakeFirstOrThrow();
    expect(held._deleted_at).not.toBeNull();
  });

  it("keeps a sequence #9 no longer knows deleted while schedules still name it, and brings it back once #9 answers again", async () => {
    const h = await harness(2);
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    const sequence = h.upstream.state.sequences.get(1);
    h.upstream.state.sequences.delete(1);
    const held = () => h.warehouse.db.selectFrom("email_sequences").select(["_deleted_at", "_synced_at"]).where("id", "=", 1).executeTakeFirstOrThrow();
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    const deleted = await held();
    expect(deleted._deleted_at).not.toBeNull();
    // The next walk of the leads reads the schedules' copies of it: they neither bring it back nor make it go again.
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    expect(await held()).toEqual(deleted);
    h.upstream.state.sequences.set(1, sequence as NonNullable<typeof sequence>);
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");
    expect((await held())._deleted_at).toBeNull();
  });

  it("sees an email sequence's label change on the campaign's next cycle", async () => {
    const h = await harness(2);
    await runCampaignSync(h.context(), CAMPAIGN);
    (h.upstream.state.sequences.get(1) as { label: string }).label = "approved";
    await runCampaignSync(h.context(), CAMPAIGN);
    expect(await h.warehouse.db.selectFrom("email_sequences").select("label").where("id", "=", 1).executeTakeFirstOrThrow()).toEqual({ label: "approved" });
  });
});
