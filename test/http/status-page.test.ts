import { UnrecoverableError, Worker } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMetrics } from "../../src/http/metrics.ts";
import { startHttpServer, startStatusPageServer, type HttpServer } from "../../src/http/server.ts";
import { trackUpstreamAnswers } from "../../src/http/status-page/last-answer.ts";
import { renderPanels } from "../../src/http/status-page/render-page.ts";
import { collectStatus, type StatusSnapshot } from "../../src/http/status-page/snapshot.ts";
import { KeyRefusal } from "../../src/queue/key-refusal.ts";
import { openQueues, QUEUE_NAMES, type Queues } from "../../src/queue/queues.ts";
import { rateBudgetKeys } from "../../src/queue/rate-budget.ts";
import type { Warehouse } from "../../src/warehouse/connect.ts";
import { upsert } from "../../src/warehouse/upsert.ts";
import { useTestDatabase } from "../support/database.ts";
import { useTestRedis } from "../support/redis.ts";
import { openMigratedWarehouse } from "../queue/warehouse.ts";
import { campaignListingRow } from "../warehouse/rows.ts";
import { ACCOUNT, BEHIND_ERROR, CADENCE, CAMPAIGN_STREAMS, HOSTILE_NAME, NOW, seedStatusRows, UIDS } from "./status-page-rows.ts";

/** The status page's routes: auth, the HTML and its escaping, the JSON, the fleet panel and its Bull Board links. */

const databaseUrl = useTestDatabase("status_page");
const testRedis = useTestRedis("status");
const TOKEN = "status-page-token";

let warehouse: Warehouse;
let redis: Redis;
let queues: Queues;
let guarded: HttpServer;
let demo: HttpServer;
let failedJobId: string;
let upstream: ReturnType<typeof trackUpstreamAnswers>;

/** A campaign-sync job as discovery adds it (enqueueCampaignSyncs): campaign data, deduplicated per campaign. */
async function enqueue(campaignUid: string): Promise<void> {
  await queues.campaignSync.add("sync-campaign", { account: ACCOUNT, campaignUid }, { deduplication: { id: `${ACCOUNT}/${campaignUid}` } });
}

async function failOneJob(): Promise<string> {
  await enqueue(UIDS.behind);
  const connection = new Redis(testRedis.url, { maxRetriesPerRequest: null });
  const worker = new Worker(
    QUEUE_NAMES.campaignSync,
    async () => {
      throw new UnrecoverableError(BEHIND_ERROR);
    },
    { connection, prefix: testRedis.prefix },
  );
  try {
    for (let waited = 0; waited < 10_000; waited += 50) {
      const [failed] = await queues.campaignSync.getFailed(0, 0);
      if (failed?.id) return failed.id;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error("the job did not fail within 10 s");
  } finally {
    await worker.close();
    connection.disconnect();
  }
}

beforeAll(async () => {
  warehouse = await openMigratedWarehouse(databaseUrl());
  await seedStatusRows(warehouse);
  redis = new Redis(testRedis.url);
  queues = openQueues(redis, { prefix: testRedis.prefix });
  failedJobId = await failOneJob();
  // c-fresh waits in the queue, as discovery leaves it.
  await enqueue(UIDS.fresh);
  await redis.set(rateBudgetKeys(testRedis.prefix, ACCOUNT).pause, "1", "PX", 60_000);
  await new KeyRefusal(redis, { prefix: testRedis.prefix, account: ACCOUNT }).mark(new Date(NOW.getTime() - 120_000));

  upstream = trackUpstreamAnswers();
  upstream.hooks.onResponse?.({ endpoint: "/api/v1/campaigns/", method: "GET", status: 200, durationMs: 12.4, attempt: 1 });
  const page = { account: ACCOUNT, db: warehouse.db, cadence: CADENCE, rateLimitPerSecond: 10, upstream, clock: () => NOW };
  guarded = await startHttpServer({
    host: "127.0.0.1",
    port: 0,
    token: TOKEN,
    registry: createMetrics().registry,
    queues: queues.all(),
    health: { redis, redisPrefix: testRedis.prefix, db: warehouse.db },
    statusPage: { ...page, mode: "worker", fleet: { redis, queues: queues.all(), prefix: testRedis.prefix, account: ACCOUNT } },
  });
  demo = await startStatusPageServer({ host: "127.0.0.1", port: 0, token: undefined, statusPage: { ...page, mode: "demo" } });
});

afterAll(async () => {
  await Promise.all([guarded.close(), demo.close()]);
  await queues.close();
  redis.disconnect();
  await warehouse.destroy();
});

/** The panels of another account of the warehouse, as the demo's page fetches them. */
async function panelsOf(account: string): Promise<string> {
  const snapshot = await collectStatus({ account, db: warehouse.db, cadence: CADENCE, rateLimitPerSecond: 10, upstream: trackUpstreamAnswers(), clock: () => NOW });
  return renderPanels(snapshot).text;
}

const bearer = { authorization: `Bearer ${TOKEN}` };
const get = (server: HttpServer, path: string, headers: Record<string, string> = bearer) => fetch(`${server.url}${path}`, { headers });

describe("status page routes", () => {
  it("answer 401 without the token, for the page and its data", async () => {
    for (const path of ["/", "/status/panels", "/api/status"]) {
      const missing = await get(guarded, path, {});
      expect(missing.status, path).toBe(401);
      expect(missing.headers.get("www-authenticate"), path).toMatch(/Basic realm="coldsync"/);
      expect((await get(guarded, path, { authorization: "Bearer wrong" })).status, path).toBe(401);
      expect((await get(guarded, path, { authorization: `Basic ${Buffer.from("ops:wrong").toString("base64")}` })).status, path).toBe(401);
      expect((await get(guarded, path)).status, path).toBe(200);
      // A browser sends the token as the password of HTTP Basic; the user name is not checked.
      expect((await get(guarded, path, { authorization: `Basic ${Buffer.from(`ops:${TOKEN}`).toString("base64")}` })).status, path).toBe(200);
    }
    expect((await get(guarded, "/healthz", {})).status).toBe(200);
  });

  it("reject a malformed query with 400", async () => {
    expect((await get(guarded, "/api/status?runs=lots")).status).toBe(400);
    expect((await get(guarded, "/api/status?days=0")).status).toBe(400);
    expect((await get(guarded, "/api/status?runs=5&days=7")).status).toBe(200);
  });

  it("serve the snapshot as JSON", async () => {
    const snapshot = (await (await get(guarded, "/api/status")).json()) as StatusSnapshot & { generatedAt: string };
    expect(snapshot.account).toBe(ACCOUNT);
    expect(snapshot.dependencies).toMatchObject({ warehouse: "ok", redis: "ok", upstream: { answer: { status: 200, durationMs: 12 } } });
    expect(snapshot.warehouse.ok && snapshot.warehouse.value.campaigns.map((campaign) => campaign.uid)).toEqual([UIDS.fresh, UIDS.behind, UIDS.never, UIDS.done]);
    expect(snapshot.requests.ok && snapshot.requests.value.budgetPerMinute).toBe(600);
  });
});

describe("snapshots", () => {
  it("are shared by the refreshes of each query shape, not only the default one", async () => {
    type Answer = { dependencies: { upstream: { answer: { durationMs: number } } } };
    const durationOf = async (path: string) => ((await (await get(guarded, path)).json()) as Answer).dependencies.upstream.answer.durationMs;
    const shapes = ["/api/status?runs=7&days=9", "/api/status?runs=8"];
    const first = await Promise.all(shapes.map(durationOf));
    upstream.hooks.onResponse?.({ endpoint: "/api/v1/campaigns/", method: "GET", status: 200, durationMs: 99, attempt: 1 });
    // Within the snapshot's two seconds, each shape answers what it read first.
    expect(await Promise.all(shapes.map(durationOf))).toEqual(first);
    expect(await durationOf("/api/status?runs=3")).toBe(99);
    upstream.hooks.onResponse?.({ endpoint: "/api/v1/campaigns/", method: "GET", status: 200, durationMs: 12.4, attempt: 1 });
  });
});

describe("the page", () => {
  it("escapes what came from outside", async () => {
    const body = await (await get(guarded, "/")).text();
    expect(body).not.toContain(HOSTILE_NAME);
    expect(body).toContain("&lt;script&gt;document.title=&quot;owned&quot;&lt;/script&gt; &amp; &quot;quotes&quot;");
  });

  it("marks the failing campaign with its error, and a recovered one as recovered", async () => {
    const body = await (await get(guarded, "/")).text();
    const row = (uid: string) => new RegExp(`<tr class="([a-z]*)" data-campaign="${uid}">([\\s\\S]*?)</tr>`).exec(body);
    expect(row(UIDS.behind)?.[1]).toBe("failing");
    expect(row(UIDS.behind)?.[2]).toContain(`<div class="error" data-error title="${BEHIND_ERROR}">${BEHIND_ERROR} <small>`);
    expect(row(UIDS.behind)?.[2]).toContain("behind: 2 h");
    expect(row(UIDS.done)?.[1]).toBe("");
    expect(row(UIDS.done)?.[2]).toContain("recovered from: old failure");
    expect(row(UIDS.never)?.[2]).toContain("never complete");
    // Rows with field issues, from the data-quality read.
    expect(row(UIDS.fresh)?.[2]).toContain('<td class="num warn-text">3</td>');
    // Problems first: the failing campaign heads the table.
    expect(body.indexOf(`data-campaign="${UIDS.behind}"`)).toBeLessThan(body.indexOf(`data-campaign="${UIDS.fresh}"`));
  });

  it("shows the fleet with its Retry-After pause, and links each campaign to its job in Bull Board", async () => {
    const body = await (await get(guarded, "/")).text();
    expect(body).toContain("paused for Retry-After");
    expect(body).toMatch(/API key refused \(401\) <time [^>]*>2 min ago<\/time>: events held back until a discovery is not refused/);
    const waiting = await queues.campaignSync.getDeduplicationJobId(`${ACCOUNT}/${UIDS.fresh}`);
    const jobLink = (id: string | null, state: string) =>
      `<a href="admin/queues/queue/campaign-sync/${id}" data-job title="job ${id} · ${state} in campaign-sync">job ${id}</a><small class="job-state">${state}</small>`;
    expect(body).toContain(jobLink(waiting, "waiting"));
    expect(body).toContain(jobLink(failedJobId, "failed"));
    // A campaign without a recent job links to the queue.
    expect(body).toMatch(new RegExp(`data-campaign="${UIDS.never}"[\\s\\S]*?<a href="admin/queues/queue/campaign-sync" `));
    // Bull Board answers the link (its single-page app routes /queue/:name/:jobId).
    expect((await get(guarded, `/admin/queues/queue/campaign-sync/${failedJobId}`)).status).toBe(200);
  });

  it("refreshes from status/panels, the same panels without the document around them", async () => {
    const page = await (await get(guarded, "/")).text();
    const panels = await (await get(guarded, "/status/panels")).text();
    expect(page).toContain('fetch("status/panels" + location.search');
    expect(panels).not.toContain("<html");
    expect(panels).toContain(`data-campaign="${UIDS.behind}"`);
  });

  it("stands without queues or Redis, as in the demo", async () => {
    const response = await get(demo, "/", {});
    expect(response.status).toBe(200);
    const body = await response.text();
    expect(body).toContain("no queues (demo)");
    expect(body).toContain("not used (demo)");
    expect(body).not.toContain("admin/queues");
    const snapshot = (await (await get(demo, "/api/status", {})).json()) as StatusSnapshot;
    expect(snapshot.fleet).toBeNull();
    expect(snapshot.dependencies.redis).toBeNull();
  });

  it("clips a long error between characters, leaving no lone surrogate on the page", async () => {
    const account = "emoji";
    await upsert(warehouse.db, "campaigns", [campaignListingRow("e-1", { status: "running", _account: account })], NOW);
    const message = `${"a".repeat(298)}🚀 launch failed`;
    await warehouse.db
      .insertInto("sync_runs")
      .values({ account, scope: "e-1", trigger: "worker", started_at: NOW, finished_at: NOW, outcome: "partial", requests: 1, errors: JSON.stringify([{ campaign_uid: "e-1", stream: "leads", message }]) })
      .execute();
    const panels = await panelsOf(account);
    expect(panels).toContain(`${"a".repeat(298)}🚀…`);
    expect(panels).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });

  it("shows a lead refresh only once one ran: events that needed none are no stream behind", async () => {
    const account = "refreshes";
    await upsert(warehouse.db, "campaigns", ["r-1", "r-2"].map((uid) => campaignListingRow(uid, { status: "running", _account: account })), NOW);
    const scanned = new Date(NOW.getTime() - 30_000);
    await warehouse.db
      .insertInto("sync_checkpoints")
      .values([
        ...["r-1", "r-2"].flatMap((uid) => CAMPAIGN_STREAMS.map((stream) => ({ account, campaign_uid: uid, stream, last_complete_scan_at: scanned, updated_at: NOW }))),
        { account, campaign_uid: "r-1", stream: "lead_refresh", last_complete_scan_at: null, updated_at: NOW },
        { account, campaign_uid: "r-2", stream: "lead_refresh", last_complete_scan_at: scanned, updated_at: NOW },
      ])
      .execute();
    const panels = await panelsOf(account);
    expect(panels.match(/title="lead_refresh: [^"]*"/g)).toEqual([expect.stringMatching(/last complete scan/)]);
    expect(panels).not.toMatch(/class="stream[^"]* never"/);
  });

  it("shows the first 300 campaigns needing attention and the first 200 others, and says where the rest are", async () => {
    // Measured with 5,000 campaigns in Chromium before the bound: an 8 MB page, and each 5 s refresh's swap blocked
    // the tab for 11 s. Here only the size, which does not depend on the machine.
    const account = "thousands";
    const uids = Array.from({ length: 2000 }, (_, index) => `k-${String(index).padStart(4, "0")}`);
    const failing = uids.slice(-303);
    await upsert(warehouse.db, "campaigns", uids.map((uid, index) => campaignListingRow(uid, { status: "running", name: `Campaign ${String(index).padStart(4, "0")}`, _account: account })), NOW);
    const scanned = new Date(NOW.getTime() - 30_000);
    const checkpoints = uids.flatMap((uid) => CAMPAIGN_STREAMS.map((stream) => ({ account, campaign_uid: uid, stream, last_complete_scan_at: scanned, updated_at: NOW })));
    for (let index = 0; index < checkpoints.length; index += 4000) await warehouse.db.insertInto("sync_checkpoints").values(checkpoints.slice(index, index + 4000)).execute();
    // The last 303 in the warehouse's order failed after their last scans (an outage): 300 of them come first.
    const errorOf = (uid: string) => JSON.stringify([{ campaign_uid: uid, stream: "leads", message: `failure of ${uid}` }]);
    await warehouse.db
      .insertInto("sync_runs")
      .values(failing.map((uid) => ({ account, scope: uid, trigger: "worker" as const, started_at: NOW, finished_at: NOW, outcome: "partial" as const, requests: 1, errors: errorOf(uid) })))
      .execute();

    const panels = await panelsOf(account);
    expect(Buffer.byteLength(panels)).toBeLessThan(1_000_000);
    const rows = [...panels.matchAll(/<tr class="([a-z]*)" data-campaign="([^"]+)"/g)].map((match) => match[2]);
    expect(rows).toEqual([...failing.slice(0, 300), ...uids.slice(0, 200)]);
    expect(panels).toContain("1,500 more campaigns not shown, 3 of them needing attention: <a href=\"api/status\">api/status</a> lists them all.");
    expect(panels.match(/<tr data-funnel=/g)).toHaveLength(200);
    expect(panels).toContain("1,800 more campaigns not shown (those that sent fewer)");
  });
});
