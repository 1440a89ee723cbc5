import { once } from "node:events";
import { createServer, type AddressInfo, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorker } from "../../src/commands/worker-process.ts";
import { loadConfig } from "../../src/config.ts";
import { createLogger } from "../../src/logger.ts";
import type { Warehouse } from "../../src/warehouse/connect.ts";
import { useTestDatabase } from "../support/database.ts";
import { useEmulator } from "../support/emulator.ts";
import { useTestRedis } from "../support/redis.ts";
import { distinctiveApiKey, workerEnv } from "./end-to-end.ts";
import { FAST_TUNING } from "./harness.ts";
import { openMigratedWarehouse } from "./warehouse.ts";

const API_KEY = distinctiveApiKey();
const emulator = useEmulator({ apiKeys: [API_KEY] });
const databaseUrl = useTestDatabase("start");
const testRedis = useTestRedis("start");
let warehouse: Warehouse;
let squatter: Server;

beforeAll(async () => {
  warehouse = await openMigratedWarehouse(databaseUrl());
  squatter = createServer().listen(0, "127.0.0.1");
  await once(squatter, "listening");
});

afterAll(async () => {
  squatter.close();
  await warehouse.destroy();
});

/** Open TCP sockets of this process: Redis, PostgreSQL and HTTP connections alike. */
function openSockets(): number {
  return process.getActiveResourcesInfo().filter((resource) => resource === "TCPSocketWrap").length;
}

describe("coldsync worker start-up", () => {
  it("closes every connection it opened when a late step fails (the HTTP port is taken)", async () => {
    const { port } = squatter.address() as AddressInfo;
    const env = workerEnv(
      { apiUrl: emulator().url, apiKey: API_KEY, databaseUrl: databaseUrl(), redisUrl: testRedis.url, prefix: testRedis.prefix },
      { COLDSYNC_HTTP_PORT: String(port) },
    );
    const before = openSockets();
    await expect(startWorker(loadConfig(env, ["apiKey", "databaseUrl"]), { logger: createLogger({ level: "silent" }), tuning: FAST_TUNING })).rejects.toThrow(
      /EADDRINUSE|address already in use/,
    );
    // Sockets close asynchronously after quit(); a leaked Redis or PostgreSQL connection never does.
    await expect.poll(openSockets, { timeout: 10_000 }).toBeLessThanOrEqual(before);
  });
});
