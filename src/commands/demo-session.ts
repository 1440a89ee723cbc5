import { setTimeout as sleep } from "node:timers/promises";
import { sql } from "kysely";
import { clip } from "../clip.ts";
import { ConfigError, loadConfig, type Config } from "../config.ts";
import { startEmulator, type RunningEmulator } from "../emulator/server.ts";
import { startStatusPageServer } from "../http/server.ts";
import { trackUpstreamAnswers, type UpstreamAnswerTracker } from "../http/status-page/last-answer.ts";
import type { Logger } from "../logger.ts";
import { openRuntime, type Runtime } from "../runtime.ts";
import { runFullSync } from "../sync/runs.ts";
import type { Warehouse } from "../warehouse/connect.ts";
import { migrateToLatest } from "../warehouse/migrate.ts";
import { commandLogger, table } from "./output.ts";
import { syncOnce } from "./sync-once.ts";

/** Each --serve cycle plays the emulator this far forward, so that campaigns visibly move between syncs. */
const SIMULATED_SECONDS_PER_CYCLE = 3_600;

const DEMO_KEY = "demo";

/**
 * The demo's configuration: `env` (the environment, less what its flags override), pointed at the emulator
 * (its address is filled in once it listens), local unless asked otherwise.
 */
export function demoConfig(env: NodeJS.ProcessEnv): Config {
  return loadConfig({
    ...env,
    COLDSYNC_API_URL: "http://127.0.0.1",
    COLDSYNC_API_KEY: DEMO_KEY,
    COLDSYNC_RATE_LIMIT: "200",
    COLDSYNC_HTTP_HOST: env.COLDSYNC_HTTP_HOST?.trim() || "127.0.0.1",
  });
}

export interface DemoOptions {
  seed: number;
  serve: boolean;
  everyMs: number;
}

/**
 * `coldsync demo`: the emulator, the embedded warehouse (or DATABASE_URL), one sync and the campaign funnel.
 * `settings` were read before anything started (demo.ts); the emulator's address is known once it listens.
 */
export async function runDemo(settings: Config, options: DemoOptions): Promise<void> {
  const emulator = await startEmulator({ seed: options.seed, scale: "small", apiKeys: [DEMO_KEY] });
  try {
    const config: Config = { ...settings, api: { ...settings.api, url: emulator.url } };
    const logger = commandLogger(config);
    const where = config.warehouse.databaseUrl ? "PostgreSQL (DATABASE_URL)" : `embedded PGlite in ${config.warehouse.dataDir}/pglite`;
    console.log(`emulator on ${emulator.url}; warehouse: ${where}, schema ${config.warehouse.schema}`);
    const upstream = trackUpstreamAnswers();
    const runtime = await openRuntime(config, { logger, hooks: upstream.hooks });
    try {
      await refuseSyncedWarehouse(runtime.warehouse);
      const firstSync = () => syncAndShowFunnel(runtime, logger, options.serve);
      if (options.serve) await serveUntilStopped({ config, runtime, emulator, upstream, everyMs: options.everyMs, firstSync });
      else await firstSync();
    } finally {
      await runtime.close();
    }
  } finally {
    await emulator.close();
  }
}

/**
 * The demo syncs its emulator as the configured account: into a schema a real account was synced into, its walk
 * would take every campaign of that account, which the emulator does not know, as deleted upstream (with their
 * leads and events), and count the emulator's as the account's. So it runs only in a schema no other command
 * has synced into (a shell set up for production has DATABASE_URL set, and the embedded warehouse is `sync
 * --once`'s too).
 */
async function refuseSyncedWarehouse(warehouse: Warehouse): Promise<void> {
  const runs = sql.id(warehouse.schema, "sync_runs");
  const { rows: migrated } = await sql<{ found: boolean }>`SELECT to_regclass(${`${warehouse.schema}.sync_runs`}) IS NOT NULL AS found`.execute(warehouse.db);
  if (migrated[0]?.found !== true) return;
  const { rows: synced } = await sql`SELECT 1 FROM ${runs} WHERE "trigger" <> 'demo' LIMIT 1`.execute(warehouse.db);
  if (synced.length === 0) return;
  const where = warehouse.kind === "postgres" ? "DATABASE_URL" : "the embedded warehouse";
  throw new ConfigError([
    `COLDSYNC_SCHEMA: schema ${warehouse.schema} of ${where} holds what sync or worker runs wrote; the demo syncs its emulator only into a schema of its own (it would take that account's campaigns as deleted): set COLDSYNC_SCHEMA to another schema, for example coldsync_demo`,
  ]);
}

/** The demo's first sync, with its progress and summary, then the funnel it filled; false when Ctrl-C stopped it. */
async function syncAndShowFunnel(runtime: Runtime, logger: Logger, serving: boolean): Promise<boolean> {
  const summary = await syncOnce(runtime, logger, { trigger: "demo" });
  if (summary.outcome === "aborted") return false;
  await printFunnel(runtime);
  console.log(await queryHint(runtime.warehouse, serving));
  return true;
}

async function printFunnel(runtime: Runtime): Promise<void> {
  const funnel = await runtime.warehouse.db
    .selectFrom("campaign_funnel")
    .select(["name", "status", "leads", "emails_sent", "opened", "clicked", "replied", "positive_replies", "open_rate", "reply_rate"])
    .orderBy("emails_sent", "desc")
    .orderBy("name")
    .execute();
  const percent = (rate: number | null) => (rate === null ? "—" : `${(Number(rate) * 100).toFixed(1)}%`);
  console.log(
    table(
      ["campaign", "status", "leads", "sent", "opened", "clicked", "replied", "positive", "open rate", "reply rate"],
      funnel.map((row) => [
        clip(row.name ?? "", 40),
        row.status,
        row.leads,
        row.emails_sent,
        row.opened,
        row.clicked,
        row.replied,
        row.positive_replies,
        percent(row.open_rate),
        percent(row.reply_rate),
      ]),
    ),
  );
}

/**
 * How to query what the demo wrote: `coldsync sql` reads either warehouse (the embedded one only once the demo has
 * let go of it); PostgreSQL also takes any client, which needs the schema named, quoted as PostgreSQL needs it
 * (a schema named after a reserved word, such as `user`).
 */
export async function queryHint(warehouse: Warehouse, serving: boolean): Promise<string> {
  const command = `npx coldsync sql "SELECT * FROM campaign_funnel"`;
  const whenFree = warehouse.kind === "pglite" && serving ? " once the demo has stopped" : "";
  let anyClient = "";
  if (warehouse.kind === "postgres") {
    const { rows } = await sql<{ schema: string }>`SELECT quote_ident(${warehouse.schema}) AS schema`.execute(warehouse.db);
    anyClient = `, or from any PostgreSQL client: SELECT * FROM ${rows[0]?.schema ?? warehouse.schema}.campaign_funnel;`;
  }
  return `query it yourself: ${command}${whenFree}${anyClient} (see README, "The warehouse")`;
}

interface ServeOptions {
  config: Config;
  runtime: Runtime;
  emulator: RunningEmulator;
  upstream: UpstreamAnswerTracker;
  everyMs: number;
  /** The demo's first sync; false when Ctrl-C stopped it. */
  firstSync: () => Promise<boolean>;
}

/**
 * `demo --serve`: the status page over the demo's own warehouse (no Redis, no
 * workers: the fleet panel says so), open from before the first sync so that
 * it shows that sync's progress, and a sync every `everyMs` after playing the
 * emulator an hour forward, so the page has something to show. Ctrl-C (or
 * SIGTERM) stops the sync in flight after the page it is writing, closes the
 * server, and lets the caller close the warehouse and the emulator.
 */
async function serveUntilStopped(options: ServeOptions): Promise<void> {
  const { config, runtime, emulator } = options;
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    // The page reads the warehouse's tables from its first request on.
    await migrateToLatest(runtime.warehouse);
    const server = await startStatusPageServer({
      host: config.http.host,
      port: config.http.port,
      token: config.http.token,
      statusPage: {
        mode: "demo",
        account: config.account,
        db: runtime.warehouse.db,
        cadence: config.worker,
        rateLimitPerSecond: config.api.rateLimit,
        upstream: options.upstream,
      },
    });
    try {
      console.log(`status page: ${server.url}/ (refreshes itself; a sync every ${options.everyMs / 1000} s; Ctrl-C stops)`);
      if (!(await options.firstSync())) stop.abort();
      for (;;) {
        await sleep(options.everyMs, undefined, { signal: stop.signal }).catch(() => undefined);
        if (stop.signal.aborted) break;
        const moved = emulator.advance(SIMULATED_SECONDS_PER_CYCLE);
        const summary = await runFullSync(runtime.syncContext({ trigger: "demo", signal: stop.signal }));
        console.log(`emulator at ${moved.now}; sync ${summary.runId}: ${summary.outcome} in ${(summary.durationMs / 1000).toFixed(1)} s, ${summary.requests} requests`);
      }
    } finally {
      await server.close();
    }
    console.log("stopped");
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}
