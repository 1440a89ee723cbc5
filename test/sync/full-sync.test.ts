import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { runCampaignSync, runFullSync } from "../../src/sync/runs.ts";
import { UpstreamClient } from "../../src/upstream/client.ts";
import { useTestDatabase } from "../support/database.ts";
import { openSyncFixture, TEST_KEY, type SyncFixture } from "../support/sync.ts";
import { diffWithTruth, warehouseKeys } from "../support/truth.ts";

const databaseUrl = useTestDatabase("sync");

let fixture: SyncFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

describe.each(["asc", "desc", "shuffle"] as const)("a full sync under hostile faults, order %s", (order) => {
  it("lands exactly the emulator's records, once each", async () => {
    fixture = await openSyncFixture(databaseUrl(), `full_${order}`, { order, faults: "hostile" });
    const summary = await runFullSync(fixture.context());

    expect(summary.failures.map((failure) => `${failure.stream}: ${failure.error.message}`)).toEqual([]);
    expect(summary.outcome).toBe("succeeded");
    expect(summary.retries).toBeGreaterThan(0);
    const truth = fixture.emulator.truth(TEST_KEY);
    expect(diffWithTruth(truth, await warehouseKeys(fixture.warehouse.db))).toEqual({});
  });
});

describe("the runs after the first with nothing new upstream", () => {
  it("makes only the minimum requests and rewrites no row", async () => {
    fixture = await openSyncFixture(databaseUrl(), "second_run");
    const first = await runFullSync(fixture.context());
    expect(first.outcome).toBe("succeeded");

    const db = fixture.warehouse.db;
    const campaigns = await db
      .selectFrom("campaigns")
      .select([
        "campaigns.uid",
        "campaigns.status",
        "campaigns.started_running_at",
        sql<number>`(select count(*)::int from leads l where l.campaign_uid = campaigns.uid)`.as("leads"),
        sql<number>`(select count(*)::int from email_sequences q where q.campaign_uid = campaigns.uid and q._deleted_at is null)`.as("sequences"),
      ])
      .execute();
    // README, "Requests per run": discovery is 1 + pages(domains) + pages(contact lists) + pages(campaigns);
    // each campaign costs its detail, plus pages(leads) and one request per email sequence unless it is terminal
    // and already had its final walks (two), plus one request per event listing (replies, clicks, opens) once it
    // has started. A page after the first starts one record early (its anchor), and a full last page needs one
    // more request to show it was the last.
    const [domains, contactLists] = await Promise.all(
      (["domains", "contact_lists"] as const).map(async (table) => Number((await db.selectFrom(table).select(sql<number>`count(*)`.as("n")).executeTakeFirst())?.n)),
    );
    const pages = (rows: number) => (rows < 100 ? 1 : Math.floor((rows - 100) / 99) + 2);
    const terminal = new Set(["complete", "cancelled", "failed"]);
    const expected = (finalWalksDone: boolean) =>
      1 +
      pages(domains ?? 0) +
      pages(contactLists ?? 0) +
      pages(campaigns.length) +
      campaigns.reduce((sum, campaign) => {
        const walked = finalWalksDone && terminal.has(campaign.status ?? "") ? 0 : pages(campaign.leads) + campaign.sequences;
        const events = campaign.started_running_at === null ? 0 : 3;
        return sum + 1 + walked + events;
      }, 0);

    // The second run makes the terminal campaigns' second final walk; the third walks none of them.
    const secondStartedAt = new Date();
    const second = await runFullSync(fixture.context());
    expect(second.outcome).toBe("succeeded");
    expect(second.requests).toBe(expected(false));
    const third = await runFullSync(fixture.context());
    expect(third.requests).toBe(expected(true));
    expect(third.requests).toBeLessThan(second.requests);
    for (const run of [second, third]) expect(Object.values(run.streams).reduce((sum, totals) => sum + totals.written, 0)).toBe(0);
    for (const table of ["workspaces", "domains", "contact_lists", "campaigns", "campaign_sending_domains", "email_sequences", "leads", "contacts", "schedules", "replies", "link_clicks", "email_opens"]) {
      const touched = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where _synced_at >= ${secondStartedAt} or _deleted_at >= ${secondStartedAt}`.execute(db);
      expect({ table, touched: touched.rows[0]?.n }).toEqual({ table, touched: 0 });
    }
  });
});

describe("simulated time between two runs", () => {
  it("picks up exactly the new and changed records and keeps the history", async () => {
    fixture = await openSyncFixture(databaseUrl(), "advance");
    // Two runs: the terminal campaigns' final walks are done, and only a refresh reads their leads again.
    await runFullSync(fixture.context());
    await runFullSync(fixture.context());
    const db = fixture.warehouse.db;
    const statusesBefore = new Map((await db.selectFrom("campaigns").select(["uid", "status"]).execute()).map((row) => [row.uid, row.status]));
    const historyBefore = Number((await db.selectFrom("campaign_history").select(sql<number>`count(*)`.as("n")).executeTakeFirst())?.n);

    const report = fixture.emulator.advance(3 * 24 * 3600);
    expect(Object.values(report.created).some((count) => Number(count ?? 0) > 0)).toBe(true);
    const summary = await runFullSync(fixture.context());

    expect(summary.outcome).toBe("succeeded");
    expect(diffWithTruth(fixture.emulator.truth(TEST_KEY), await warehouseKeys(db))).toEqual({});
    // Changed records too: every schedule's open count agrees with its open events, in terminal campaigns
    // (whose touched leads are fetched again) as in running ones (walked in full).
    const stale = await sql<{ id: number; status: string }>`
      select s.id, c.status from schedules s join campaigns c on c.uid = s.campaign_uid
       where s.email_open_count <> (select count(*) from email_opens o where o.schedule_id = s.id)`.execute(db);
    expect(stale.rows).toEqual([]);
    expect(summary.streams.lead_refresh?.fetched ?? 0).toBeGreaterThan(0);
    const statusesAfter = await db.selectFrom("campaigns").select(["uid", "status"]).execute();
    const changed = statusesAfter.filter((row) => statusesBefore.get(row.uid) !== row.status);
    const historyAfter = Number((await db.selectFrom("campaign_history").select(sql<number>`count(*)`.as("n")).executeTakeFirst())?.n);
    expect(historyAfter - historyBefore).toBeGreaterThanOrEqual(changed.length);
    for (const campaign of changed) {
      const rows = await db.selectFrom("campaign_history").select(["status", "valid_to"]).where("campaign_uid", "=", campaign.uid).orderBy("valid_from").execute();
      expect(rows.at(-1)).toMatchObject({ status: campaign.status, valid_to: null });
      expect(rows.some((row) => row.status === statusesBefore.get(campaign.uid))).toBe(true);
    }
  });
});

describe("an interrupted run", () => {
  it("is resumed by the next run without losing or duplicating anything", async () => {
    fixture = await openSyncFixture(databaseUrl(), "interrupted", { faults: "mild" });
    const controller = new AbortController();
    let rowsWritten = 0;
    const aborted = await runFullSync(
      fixture.context({
        signal: controller.signal,
        observer: {
          onRowsWritten: (table, rows) => {
            rowsWritten += rows;
            if (table === "schedules" && rowsWritten > 400) controller.abort();
          },
        },
      }),
    );
    expect(aborted.outcome).toBe("aborted");
    const interrupted = await fixture.warehouse.db.selectFrom("sync_checkpoints").select("stream").where("scan_started_at", "is not", null).execute();
    expect(interrupted.length).toBeGreaterThan(0);

    const resumed = await runFullSync(fixture.context());
    expect(resumed.outcome).toBe("succeeded");
    expect(diffWithTruth(fixture.emulator.truth(TEST_KEY), await warehouseKeys(fixture.warehouse.db))).toEqual({});
  });
});

describe("a run whose process died", () => {
  it("is closed as aborted by the account's next run, a campaign's too, and a live run of another process is not", async () => {
    fixture = await openSyncFixture(databaseUrl(), "dead_run");
    const db = fixture.warehouse.db;
    const liveHolder = "coldsync:run:another-process";
    const otherProcess = await fixture.warehouse.locks.acquire([liveHolder]);
    const inserted = await db
      .insertInto("sync_runs")
      .values([
        { account: "acme", scope: null, trigger: "worker", started_at: new Date(Date.now() - 60_000), outcome: "running", holder: "coldsync:run:gone" },
        { account: "acme", scope: "cmp_other", rhythm: "events", trigger: "worker", started_at: new Date(), outcome: "running", holder: liveHolder },
      ])
      .returning("id")
      .execute();
    const [dead, live] = inserted.map((row) => row.id);
    const [campaign] = fixture.emulator.truth(TEST_KEY).keys.campaigns;
    const outcomesNow = () => db.selectFrom("sync_runs").select(["id", "outcome", "finished_at"]).where("id", "in", [dead as number, live as number]).orderBy("id").execute();
    // README, Failure modes: "closed as aborted by the next run that opens (any campaign, …)".
    await runCampaignSync(fixture.context(), campaign as string, "leads");
    const outcomes = await outcomesNow();
    expect(outcomes.map((row) => row.outcome)).toEqual(["aborted", "running"]);
    expect(outcomes[0]?.finished_at).not.toBeNull();
    await otherProcess?.release();
  });
});

describe("an email sequence deleted upstream", () => {
  it("is soft-deleted once no schedule sends it", async () => {
    fixture = await openSyncFixture(databaseUrl(), "deleted_sequence");
    await runFullSync(fixture.context());
    const db = fixture.warehouse.db;
    const candidate = await db
      .selectFrom("schedules")
      .innerJoin("campaigns", "campaigns.uid", "schedules.campaign_uid")
      .select(["schedules.campaign_uid", sql<number[]>`array_agg(distinct schedules.email_sequence_id)`.as("sequences")])
      .where("campaigns.status", "=", "created")
      .groupBy("schedules.campaign_uid")
      .having(sql`count(distinct schedules.email_sequence_id)`, ">=", 2)
      .executeTakeFirstOrThrow();
    const doomed = Number(candidate.sequences[0]);
    await fixture.client.deleteEmailSequence(doomed);

    const summary = await runFullSync(fixture.context());
    expect(summary.outcome).toBe("succeeded");
    expect(diffWithTruth(fixture.emulator.truth(TEST_KEY), await warehouseKeys(db))).toEqual({});
    const row = await db.selectFrom("email_sequences").select("_deleted_at").where("id", "=", doomed).executeTakeFirstOrThrow();
    expect(row._deleted_at).not.toBeNull();
  });
});

describe("runs that share one client", () => {
  it("each count their own requests", async () => {
    fixture = await openSyncFixture(databaseUrl(), "shared_client");
    let answered = 0;
    const client = new UpstreamClient({ baseUrl: fixture.emulator.url, apiKey: TEST_KEY, requestsPerSecond: 2_000, hooks: { onResponse: () => (answered += 1) } });
    const [first, second] = fixture.emulator.truth(TEST_KEY).keys.campaigns;
    const context = fixture.context({ client });
    const [a, b] = await Promise.all([runCampaignSync(context, first as string), runCampaignSync(context, second as string)]);
    await client.close();
    expect(a.requests).toBeGreaterThan(0);
    expect(b.requests).toBeGreaterThan(0);
    expect(a.requests + b.requests).toBe(answered);
  });
});
