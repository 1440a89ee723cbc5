import type { Config } from "./config.ts";
import { createLogger, type Logger, type LoggerSettings } from "./logger.ts";
import { secretsOf } from "./secrets.ts";
import { ByteBudget } from "./sync/byte-budget.ts";
import type { RunTrigger, SyncContext, SyncObserver } from "./sync/context.ts";
import { UpstreamClient, type ClientHooks, type RequestLimiter } from "./upstream/client.ts";
import { openWarehouse, type Warehouse } from "./warehouse/connect.ts";

/**
 * Builds what a command needs from validated configuration: the logger (with
 * the API key and the passwords of PostgreSQL and Redis scrubbed from every
 * line), the upstream client and the warehouse, and closes them again in the
 * right order.
 */

export interface Runtime {
  logger: Logger;
  warehouse: Warehouse;
  client: UpstreamClient;
  syncContext(options: { trigger: RunTrigger; signal?: AbortSignal; observer?: SyncObserver }): SyncContext;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  logger?: Logger;
  limiter?: RequestLimiter;
  hooks?: ClientHooks;
  /** False for the commands that refuse an unmigrated warehouse instead of migrating it (WarehouseSettings.createSchema). */
  createSchema?: boolean;
  /** Told when a warehouse connection breaks (the worker's PostgreSQL watch). */
  onConnectionError?: (error: Error) => void;
}

export function loggerFor(config: Config, settings: Pick<LoggerSettings, "quiet"> = {}): Logger {
  return createLogger({ level: config.logLevel, secrets: secretsOf(config), ...settings });
}

export async function openRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  const logger = options.logger ?? loggerFor(config);
  if (config.api.key === undefined) throw new Error("COLDSYNC_API_KEY is required");
  const warehouse = await openWarehouse({
    ...config.warehouse,
    ...(options.createSchema === undefined ? {} : { createSchema: options.createSchema }),
    ...(options.onConnectionError ? { onConnectionError: options.onConnectionError } : {}),
  });
  const client = new UpstreamClient({
    baseUrl: config.api.url,
    apiKey: config.api.key,
    requestsPerSecond: config.api.rateLimit,
    concurrency: config.api.concurrency,
    timeoutMs: config.api.timeoutMs,
    maxRetries: config.api.maxRetries,
    logger: logger.child({ component: "upstream" }),
    ...(options.limiter ? { limiter: options.limiter } : {}),
    ...(options.hooks ? { hooks: options.hooks } : {}),
  });
  const pageBudget = new ByteBudget();
  return {
    logger,
    warehouse,
    client,
    syncContext: ({ trigger, signal, observer }) => ({
      client,
      pageBudget,
      db: warehouse.db,
      account: config.account,
      logger,
      trigger,
      locks: warehouse.locks,
      ...(config.worker.terminalRewalkEveryMs === undefined ? {} : { terminalRewalkEveryMs: config.worker.terminalRewalkEveryMs }),
      ...(signal ? { signal } : {}),
      ...(observer ? { observer } : {}),
    }),
    close: async () => {
      await client.close();
      await warehouse.destroy();
    },
  };
}
