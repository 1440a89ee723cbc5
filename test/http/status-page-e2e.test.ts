import { existsSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { once } from "node:events";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Redis } from "ioredis";
import { chromium, type BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorker, type RunningWorker } from "../../src/commands/worker-process.ts";
import { loadConfig } from "../../src/config.ts";
import { startEmulator, type RunningEmulator } from "../../src/emulator/server.ts";
import { createLogger } from "../../src/logger.ts";
import { openQueues } from "../../src/queue/queues.ts";
import { runCampaignSync, runFullSync } from "../../src/sync/runs.ts";
import { UpstreamClient } from "../../src/upstream/client.ts";
import type { Warehouse } from "../../src/warehouse/connect.ts";
import { useTestDatabase } from "../support/database.ts";
import { useTestRedis } from "../support/redis.ts";
import { openMigratedWarehouse } from "../queue/warehouse.ts";

/**
 * The status page in a real browser: the emulator's small seed synced into a
 * test warehouse, one campaign made to fail through a proxy that answers 500
 * for it, then `coldsync worker` as production starts it (queues, workers,
 * HTTP server, token) and headless Chromium opening the page with the token
 * as HTTP Basic credentials, as a person would.
 *
 * Chromium is Debian's `chromium` package (`bash .ci/run` installs it); when
 * it is missing this file fails and says so, it does not skip.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SCREENSHOT = resolve("test-results/status-page.png");
/** `COLDSYNC_DOCS_SCREENSHOT=1` also refreshes the README's picture. */
const DOCS_SCREENSHOT = resolve("docs/status-page.png");
const API_KEY = "status-e2e-key";
const ACCOUNT = "acme";
const TOKEN = "status-e2e-token";
const FAILURE = "upstream exploded for this campaign";

const databaseUrl = useTestDatabase("status_e2e");
const testRedis = useTestRedis("status_e2e");
let emulator: RunningEmulator;
let proxy: Server;
let proxyUrl: string;
let warehouse: Warehouse;
let worker: RunningWorker;
let profile: string;
let browser: BrowserContext;
let campaigns: string[];
let victim: string;

/** Forwards to the emulator, but answers 500 to any request about `campaignUid`'s opens. */
async function startFailingProxy(target: string, campaignUid: () => string): Promise<Server> {
  const server = createServer((incoming, outgoing) => {
    const url = new URL(incoming.url ?? "/", "http://proxy");
    if (url.pathname.endsWith("/email-open-events/") && url.searchParams.get("campaign_uid") === campaignUid()) {
      outgoing.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ message: FAILURE }));
      return;
    }
    const forwarded = request(`${target}${incoming.url ?? "/"}`, { method: incoming.method, headers: incoming.headers }, (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    });
    incoming.pipe(forwarded);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return server;
}

function fastClient(baseUrl: string): UpstreamClient {
  return new UpstreamClient({ baseUrl, apiKey: API_KEY, requestsPerSecond: 2_000, concurrency: 8, timeoutMs: 5_000, maxRetries: 1, retryBaseMs: 1, retryCapMs: 5 });
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM}: the status page's browser test needs it. Install Debian's package (DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; bash .ci/run does this) or set CHROMIUM_PATH.`,
    );
  }
  emulator = await startEmulator({ seed: 5, scale: "small", apiKeys: [API_KEY] });
  campaigns = emulator.truth(API_KEY).keys.campaigns;
  victim = campaigns[0] ?? "";
  proxy = await startFailingProxy(emulator.url, () => victim);
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  warehouse = await openMigratedWarehouse(databaseUrl());

  // Everything lands first; then the victim's next sync meets a 500 on its opens.
  const logger = createLogger({ level: "silent" });
  for (const [baseUrl, sync] of [
    [emulator.url, (ctx: Parameters<typeof runFullSync>[0]) => runFullSync(ctx)],
    [proxyUrl, (ctx: Parameters<typeof runFullSync>[0]) => runCampaignSync(ctx, victim)],
  ] as const) {
    const client = fastClient(baseUrl);
    await sync({ client, db: warehouse.db, account: ACCOUNT, logger, trigger: "cli" });
    await client.close();
  }

  const config = loadConfig(
    {
      COLDSYNC_API_URL: proxyUrl,
      COLDSYNC_API_KEY: API_KEY,
      COLDSYNC_ACCOUNT: ACCOUNT,
      DATABASE_URL: databaseUrl(),
      REDIS_URL: testRedis.url,
      COLDSYNC_QUEUE_PREFIX: testRedis.prefix,
      COLDSYNC_RATE_LIMIT: "200",
      COLDSYNC_MAX_RETRIES: "0",
      COLDSYNC_HTTP_HOST: "127.0.0.1",
      COLDSYNC_HTTP_PORT: "0",
      COLDSYNC_HTTP_TOKEN: TOKEN,
    },
    ["apiKey", "databaseUrl"],
  );
  worker = await startWorker(config, { logger, tuning: { retry: { attempts: 1, backoffMs: 50 } } });

  profile = await mkdtemp(join(tmpdir(), "coldsync-chromium-"));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport: { width: 1440, height: 900 },
    // Sent only when the server asks (a 401 offering Basic), as a browser does once a person typed them.
    httpCredentials: { username: "ops", password: TOKEN, origin: worker.url, send: "unauthorized" },
  });
});

afterAll(async () => {
  await browser?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
  await worker?.close();
  await warehouse?.destroy();
  proxy?.closeAllConnections();
  proxy?.close();
  await emulator?.close();
});

/** Jobs the worker still has to run or is running. */
async function outstandingJobs(): Promise<number> {
  const redis = new Redis(testRedis.url);
  const queues = openQueues(redis, { prefix: testRedis.prefix });
  try {
    const counts = await queues.campaignSync.getJobCounts("active", "waiting", "delayed", "prioritized");
    const discovery = await queues.discovery.getJobCounts("active", "waiting");
    return Object.values(counts).reduce((sum, count) => sum + count, 0) + (discovery.active ?? 0) + (discovery.waiting ?? 0);
  } finally {
    await queues.close();
    redis.disconnect();
  }
}

describe("status page in Chromium", () => {
  it("loads without a console error, shows every campaign and the failing one's error, refreshes itself, and is photographed", async () => {
    const page = browser.pages()[0] ?? (await browser.newPage());
    const problems: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error" || message.type() === "warning") problems.push(`console ${message.type()}: ${message.text()}`);
    });
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    page.on("requestfailed", (failed) => problems.push(`request failed: ${failed.url()} ${failed.failure()?.errorText ?? ""}`));

    // A stable picture: the worker's own first round (discovery, then every campaign) is over.
    await expect.poll(outstandingJobs, { timeout: 20_000, interval: 250 }).toBe(0);
    const response = await page.goto(`${worker.url}/`);
    expect(response?.status()).toBe(200);

    for (const uid of campaigns) await expect(page.locator(`tr[data-campaign="${uid}"]`).count(), uid).resolves.toBe(1);
    const failing = page.locator(`tr[data-campaign="${victim}"]`);
    await expect(failing.getAttribute("class")).resolves.toBe("failing");
    await expect(failing.locator("[data-error]").innerText()).resolves.toContain(FAILURE);
    // Its job in Bull Board, or the queue when it has no recent job.
    await expect(failing.locator("td.jobs a").first().getAttribute("href")).resolves.toMatch(/^admin\/queues\/queue\/campaign-[a-z]+(\/\S+)?$/);
    await expect(page.locator("#fleet").innerText()).resolves.toMatch(/workers/);

    // The panels come back from status/panels, through the same credentials, without a reload.
    await page.waitForFunction('document.getElementById("refresh-state").className === "live"', undefined, { timeout: 10_000 });
    await expect(page.locator(`tr[data-campaign="${victim}"]`).getAttribute("class")).resolves.toBe("failing");

    await mkdir(resolve("test-results"), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    if (process.env.COLDSYNC_DOCS_SCREENSHOT === "1") await copyFile(SCREENSHOT, DOCS_SCREENSHOT);
    expect(existsSync(SCREENSHOT)).toBe(true);
    expect(problems).toEqual([]);
  });

  it("keeps each campaign's name and uid inside its cell, a 255-character uid too", async () => {
    const page = browser.pages()[0] ?? (await browser.newPage());
    await page.goto(`${worker.url}/`);
    expect(campaigns.some((uid) => uid.length === 255)).toBe(true);
    // How far each name or uid reaches past the right edge of its cell, in px; a string, so that this file type-checks without the DOM library.
    const overflows = await page.evaluate<Record<string, number>>(`Object.fromEntries([...document.querySelectorAll("#campaigns td.name")].flatMap((cell) =>
      [...cell.children].map((text) => [cell.parentElement.dataset.campaign + " " + text.tagName, Math.round(text.getBoundingClientRect().right - cell.getBoundingClientRect().right)])))`);
    expect(Object.keys(overflows)).toHaveLength(2 * campaigns.length);
    expect(Object.entries(overflows).filter(([, px]) => px > 0)).toEqual([]);
  });
});
