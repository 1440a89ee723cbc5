import { setTimeout as sleep } from "node:timers/promises";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { API_KEY_HEADER, API_PREFIX, PATHS } from "../../upstream/endpoints.ts";
import { PAGED_RESOURCES } from "../../upstream/paging.ts";
import { answerFault, truncatedBody, type FaultScope } from "../faults.ts";
import { attachState, stateOf, type EmulatorContext } from "./context.ts";

/**
 * What stands between a client and the /api/v1/ handlers, in the order of
 * contract A.2: the API key (401), the per-key rate limit (429), then the
 * injected faults and latency. Unknown paths and wrong methods (404, 405) are
 * answered by the not-found handler before any of this, and /admin/ routes
 * never pass through here.
 */

const LISTINGS: ReadonlySet<string> = new Set(Object.values(PAGED_RESOURCES).map((resource) => resource.endpoint));
const EVENT_LISTINGS: ReadonlySet<string> = new Set([PATHS.linkClickEvents, PATHS.emailOpenEvents]);

function faultScope(path: string): FaultScope {
  return EVENT_LISTINGS.has(path) ? "event-listing" : LISTINGS.has(path) ? "listing" : "request";
}

/**
 * The route a request matched, as registered: the router decodes the target (`/%61pi/v1/campaigns/`) and accepts
 * it in absolute form (`http://host/api/v1/campaigns/`), so its raw URL cannot say which handler will answer it.
 */
function routeOf(request: FastifyRequest): string {
  return request.is404 ? "" : (request.routeOptions.url ?? "");
}

function isApi(route: string): boolean {
  return route.startsWith(`${API_PREFIX}/`);
}

export function registerGate(app: FastifyInstance, context: EmulatorContext): void {
  const { world, settings, faults, rateLimiter } = context;

  app.addHook("onRequest", async (request, reply) => {
    const route = routeOf(request);
    if (!isApi(route)) return;
    const key = request.headers[API_KEY_HEADER];
    const account = typeof key === "string" && key !== "" ? world.accounts.get(key) : undefined;
    if (!account) {
      return reply.code(401).send({ message: key === undefined || key === "" ? "missing X-Api-Key header" : "unknown API key in X-Api-Key" });
    }
    if (settings.rateLimit > 0) {
      const retryAfter = rateLimiter.hit(key as string, settings.rateLimit);
      if (retryAfter !== undefined) {
        return reply
          .code(429)
          .header("retry-after", String(retryAfter))
          .send({ message: `rate limit of ${settings.rateLimit} requests per second exceeded; retry after ${retryAfter} second(s)` });
      }
    }
    let fault = faults.draw(settings.faults, faultScope(route));
    if (fault === "empty-page" && !faults.mayGlitch(`${account.index} ${request.url}`)) fault = undefined;
    attachState(request, { account, fault });
    switch (fault) {
      case "server-error":
      case "bad-gateway":
      case "unavailable":
      case "throttle":
        return answerFault(fault, reply, faults.flip());
      case "slow":
        await sleep(settings.slowMs);
        return;
      default:
        return;
    }
  });

  app.addHook("onSend", async (request, reply, payload) => {
    if (!isApi(routeOf(request))) return payload;
    if (settings.latencyMs > 0) await sleep(settings.latencyMs);
    return stateOf(request)?.fault === "drop" ? truncatedBody(reply, payload) : payload;
  });
}
