import type { FastifyPluginAsync } from "fastify";
import { z } from "zod";
import { API_KEY_HEADER, PATHS } from "../../upstream/endpoints.ts";
import { readBody } from "../http/bodies.ts";
import type { EmulatorContext } from "../http/context.ts";
import { ApiError } from "../http/errors.ts";
import { parseOr400 } from "../http/validation.ts";
import { runtimeSettings } from "../options.ts";
import { advance } from "../simulate.ts";
import { groundTruth } from "../store/truth.ts";

/**
 * The emulator's own controls, outside /api/v1/: the simulated clock, the
 * ground truth of an account, the runtime settings and the drift plan of a
 * record. Never subject to faults, latency, rate limits or drift.
 */

const TEN_YEARS_SECONDS = 10 * 366 * 86_400;
const advanceBody = z.object({ seconds: z.number().min(0).max(TEN_YEARS_SECONDS) });
const driftBody = z.object({ endpoint: z.enum(Object.values(PATHS)), record: z.record(z.string(), z.unknown()) });

export const adminRoutes: FastifyPluginAsync<EmulatorContext> = async (app, context) => {
  const { world, settings, recordDrift } = context;

  app.post("/admin/advance", async (request) => {
    const { value } = await readBody(request);
    const { seconds } = parseOr400(advanceBody, value, "body");
    return advance(world, seconds);
  });

  app.get("/admin/truth", async (request) => {
    const key = request.headers[API_KEY_HEADER];
    const account = typeof key === "string" && key !== "" ? world.accounts.get(key) : undefined;
    if (!account) throw new ApiError(401, "X-Api-Key must name one of the emulator's accounts");
    return groundTruth(world, account);
  });

  app.get("/admin/settings", async () => settings);

  // Validated whole (current values merged with the change), so a bad value changes nothing. A null
  // resets a setting to its default (for driftKinds: absent, every kind).
  app.post("/admin/settings", async (request) => {
    const { value } = await readBody(request);
    const change = parseOr400(z.record(z.string(), z.unknown()), value, "body");
    const merged: Record<string, unknown> = { ...settings, ...change };
    for (const [name, setting] of Object.entries(change)) if (setting === null && name in runtimeSettings.shape) delete merged[name];
    const next = parseOr400(runtimeSettings.strict(), merged, "body");
    for (const name of Object.keys(settings)) if (!(name in next)) delete (settings as Record<string, unknown>)[name];
    Object.assign(settings, next);
    return settings;
  });

  // What RunningEmulator.driftOf answers: the deviations an endpoint gives a clean record right now.
  app.post("/admin/drift", async (request) => {
    const { value } = await readBody(request);
    const { endpoint, record } = parseOr400(driftBody, value, "body");
    return { deviations: recordDrift.plan(settings, endpoint, record) };
  });
};
