import type { FastifyPluginAsync } from "fastify";
import { z } from "zod";
import { API_KEY_HEADER } from "../../upstream/endpoints.ts";
import { readBody } from "../http/bodies.ts";
import type { EmulatorContext } from "../http/context.ts";
import { ApiError } from "../http/errors.ts";
import { parseOr400 } from "../http/validation.ts";
import { runtimeSettings } from "../options.ts";
import { advance } from "../simulate.ts";
import { groundTruth } from "../store/truth.ts";

/**
 * The emulator's own controls, outside /api/v1/: the simulated clock, the
 * ground truth of an account and the runtime settings. Never subject to
 * faults, latency or rate limits.
 */

const TEN_YEARS_SECONDS = 10 * 366 * 86_400;
const advanceBody = z.object({ seconds: z.number().min(0).max(TEN_YEARS_SECONDS) });

export const adminRoutes: FastifyPluginAsync<EmulatorContext> = async (app, context) => {
  const { world, settings } = context;

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

  // Validated whole (current values merged with the change), so a bad value changes nothing.
  app.post("/admin/settings", async (request) => {
    const { value } = await readBody(request);
    const change = parseOr400(z.record(z.string(), z.unknown()), value, "body");
    const next = parseOr400(runtimeSettings.strict(), { ...settings, ...change }, "body");
    Object.assign(settings, next);
    return settings;
  });
};
