import type { AddressInfo } from "node:net";
import type { Logger } from "../logger.ts";
import { buildApp } from "./app.ts";
import { WallClock } from "./clock.ts";
import { PageDrift } from "./drift/pages.ts";
import { RecordDrift } from "./drift/records.ts";
import { FaultInjector } from "./faults.ts";
import { RateLimiter } from "./http/rate-limit.ts";
import {
  emulatorOptions,
  runtimeSettings,
  type AdvanceReport,
  type DriftEntry,
  type EmulatorOptionsInput,
  type GroundTruth,
  type RuntimeSettings,
} from "./options.ts";
import { seedWorld } from "./seed/generate.ts";
import { advance } from "./simulate.ts";
import { groundTruth } from "./store/truth.ts";
import { World } from "./store/world.ts";

/** Starts an emulator of the upstream API on a real socket, seeded and ready. */

export interface RunningEmulator {
  /** Base address without /api/v1, e.g. http://127.0.0.1:43121. */
  url: string;
  /** Mutable while running: order, workspaces, rateLimit, latencyMs, faults, slowMs, drift, driftKinds, clock. */
  settings: RuntimeSettings;
  truth(apiKey: string): GroundTruth;
  /**
   * The record-level deviations `endpoint` (a path of PATHS, e.g. PATHS.leads) gives `record`, a clean
   * record as that endpoint serves it with drift "none", under the current settings: what a drifted
   * answer changes, nested objects included. Empty when drift is off or the record does not deviate.
   */
  driftOf(endpoint: string, record: unknown): DriftEntry[];
  advance(seconds: number): AdvanceReport;
  close(): Promise<void>;
}

function hostForUrl(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

export async function startEmulator(options: EmulatorOptionsInput = {}, logger?: Logger): Promise<RunningEmulator> {
  const config = emulatorOptions.parse(options);
  const world = new World(config.seed);
  const seeding = performance.now();
  seedWorld(world, config.apiKeys, config.scale);
  logger?.info({ scale: config.scale, seed: config.seed, accounts: config.apiKeys.length, ms: Math.round(performance.now() - seeding) }, "emulator: data generated");
  const settings: RuntimeSettings = runtimeSettings.parse(config);
  const recordDrift = new RecordDrift(config.seed);
  const clock = new WallClock(world, settings, logger);
  const context = {
    world,
    settings,
    faults: new FaultInjector(config.seed),
    recordDrift,
    pageDrift: new PageDrift(config.seed),
    rateLimiter: new RateLimiter(),
    clock,
    logger,
  };
  const app = await buildApp(context, config.admin);
  await app.listen({ host: config.host, port: config.port });
  const { port } = app.server.address() as AddressInfo;
  const url = `http://${hostForUrl(config.host)}:${port}`;
  logger?.info({ url }, "emulator: listening");
  return {
    url,
    settings,
    truth(apiKey) {
      clock.catchUp();
      const account = world.accounts.get(apiKey);
      if (!account) throw new Error("truth(): no account has this API key");
      return groundTruth(world, account);
    },
    driftOf: (endpoint, record) => recordDrift.plan(settings, endpoint, record),
    advance(seconds) {
      if (!Number.isFinite(seconds) || seconds < 0) throw new RangeError("advance(): seconds must be a finite number >= 0");
      clock.catchUp();
      return advance(world, seconds);
    },
    close: async () => {
      clock.stop();
      await app.close();
    },
  };
}
