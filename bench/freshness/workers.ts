import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { loadConfig, type Config } from "../../src/config.ts";
import { openQueues, type Queues } from "../../src/queue/queues.ts";
import { openWarehouse, type Warehouse } from "../../src/warehouse/connect.ts";
import { migrateToLatest } from "../../src/warehouse/migrate.ts";
import { WorkerFleet } from "../chaos/fleet.ts";
import { scrapeRequests, type RequestCounts } from "./requests.ts";

/**
 * One `coldsync worker` process of the benchmark, configured only through
 * the environment, as production runs it, with a warehouse schema, a queue
 * prefix and an account of its own. The bench reads its warehouse, its
 * /metrics and its queues; it never talks to the process otherwise.
 */

export interface WorkerPlace {
  apiUrl: string;
  databaseUrl: string;
  redisUrl: string;
}

export interface WorkerSpec {
  name: string;
  apiKey: string;
  /** COLDSYNC_* settings on top of the shared ones (the rate limit, the cadences). */
  settings: Record<string, string>;
}

const SERVING = "serving the status page";

export class BenchWorker {
  readonly name: string;
  readonly config: Config;
  readonly warehouse: Warehouse;
  readonly #fleet: WorkerFleet;
  readonly #redis: Redis;
  readonly queues: Queues;
  url = "";
  #stopped: Promise<number | null> | undefined;

  private constructor(name: string, config: Config, warehouse: Warehouse, fleet: WorkerFleet, redis: Redis) {
    this.name = name;
    this.config = config;
    this.warehouse = warehouse;
    this.#fleet = fleet;
    this.#redis = redis;
    this.queues = openQueues(redis, { prefix: config.redis.prefix });
  }

  get account(): string {
    return this.config.account;
  }

  /** Migrates the worker's schema, starts the process and waits for its HTTP port. */
  static async start(spec: WorkerSpec, place: WorkerPlace): Promise<BenchWorker> {
    const env: Record<string, string> = {
      COLDSYNC_API_URL: place.apiUrl,
      COLDSYNC_API_KEY: spec.apiKey,
      COLDSYNC_ACCOUNT: spec.name,
      DATABASE_URL: place.databaseUrl,
      COLDSYNC_SCHEMA: spec.name,
      REDIS_URL: place.redisUrl,
      COLDSYNC_QUEUE_PREFIX: `freshness-${spec.name}`,
      COLDSYNC_HTTP_HOST: "127.0.0.1",
      COLDSYNC_HTTP_PORT: "0",
      COLDSYNC_LOG_LEVEL: "info",
      ...spec.settings,
    };
    // The bench reads the settings as the worker does, so a misspelt variable fails here, not silently there.
    const config = loadConfig(env, ["apiKey", "databaseUrl"]);
    const warehouse = await openWarehouse(config.warehouse);
    await migrateToLatest(warehouse);
    const redis = new Redis(place.redisUrl, { maxRetriesPerRequest: null });
    const fleet = new WorkerFleet(1, env, []);
    const worker = new BenchWorker(spec.name, config, warehouse, fleet, redis);
    fleet.startAll();
    const deadline = Date.now() + 120_000;
    for (;;) {
      const url = fleet.firstLogged(SERVING)?.url;
      if (typeof url === "string") {
        worker.url = url;
        return worker;
      }
      if (Date.now() > deadline) {
        await worker.stop();
        throw new Error(`the ${spec.name} worker did not open its HTTP port; its last lines:\n${fleet.lines.slice(-5).join("\n")}`);
      }
      await sleep(250);
    }
  }

  requests(): Promise<RequestCounts> {
    return scrapeRequests(this.url);
  }

  /** Error and fatal log lines (pino levels 50, 60), for the report. */
  errorLines(): string[] {
    return this.#fleet.linesAtOrAbove(50);
  }

  /** SIGTERM, as a deployment stops it; resolves to its exit code. */
  stop(): Promise<number | null> {
    this.#stopped ??= (async () => {
      const [code] = await this.#fleet.stopAll();
      await this.queues.close();
      this.#redis.disconnect();
      await this.warehouse.destroy();
      return code ?? null;
    })();
    return this.#stopped;
  }
}
