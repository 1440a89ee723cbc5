import type { AddressInfo } from "node:net";
import type { Logger } from "../logger.ts";
import { buildApp } from "./app.ts";
import { FaultInjector } from "./faults.ts";
import { RateLimiter } from "./http/rate-limit.ts";
import { emulatorOptions, runtimeSettings, type AdvanceReport, type EmulatorOptionsInput, type GroundTruth, type RuntimeSettings } from "./options.ts";
import { seedWorld } from "./seed/generate.ts";
import { advance } from "./simulate.ts";
import { groundTruth } from "./store/truth.ts";
import { World } from "./store/world.ts";

/** Starts an emulator of the upstream API on a real socket, seeded and ready. */

export interface RunningEmulator {
  /** Base address without /api/v1, e.g. http://127.0.0.1:43121. */
  url: string;
  /** Mutable while running: order, workspaces, rateLimit, latencyMs, faults, slowMs. */
  settings: RuntimeSettings;
  truth(apiKey: string): GroundTruth;
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
  const context = { world, settings, faults: new FaultInjector(config.seed), rateLimiter: new RateLimiter(), logger };
  const app = await buildApp(context, config.admin);
  await app.listen({ host: config.host, port: config.port });
  const { port } = app.server.address() as AddressInfo;
  const url = `http://${hostForUrl(config.host)}:${port}`;
  logger?.info({ url }, "emulator: listening");
  return {
    url,
    settings,
    truth(apiKey) {
      const account = world.accounts.get(apiKey);
      if (!account) throw new Error("truth(): no account has this API key");
      return groundTruth(world, account);
    },
    advance(seconds) {
      if (!Number.isFinite(seconds) || seconds < 0) throw new RangeError("advance(): seconds must be a finite number >= 0");
      return advance(world, seconds);
    },
    close: () => app.close(),
  };
}
