import type { FastifyPluginAsync, FastifyReply } from "fastify";
import { z } from "zod";
import { perShape } from "./per-shape.ts";
import { renderPage, renderPanels } from "./render-page.ts";
import { collectStatus, DEFAULT_SHAPE, periodicHeavyReads, SnapshotCache, type SnapshotShape, type StatusSnapshot, type StatusSources } from "./snapshot.ts";

/**
 * The status page as a Fastify plugin. It owns three routes, all behind the
 * server's bearer check like /metrics:
 *
 * - `GET /`: the page (HTML, server-rendered, charts as inline SVG);
 * - `GET /status/panels`: the page's panels alone, which the page fetches
 *   every few seconds and swaps in, so it refreshes without a reload;
 * - `GET /api/status`: the same snapshot as JSON, for scripts.
 *
 * Each takes `?runs=` (bars in the runs chart) and `?days=` (days of
 * engagement); the page passes its own query on to its refreshes. The
 * funnel, the days and the field-issue counts are read once a minute in the
 * background (the panels say how old they are); everything else at most every
 * two seconds, per shape of query, however many tabs refresh.
 */

export interface StatusPageOptions extends StatusSources {
  /** How often the page refreshes itself. */
  refreshMs?: number;
  /** Shown in the header: "worker" or "demo". */
  mode: string;
}

const DEFAULT_REFRESH_MS = 5_000;
/** Shorter than the refresh period, so every refresh sees new data while tabs and scripts share one read. */
const SNAPSHOT_MAX_AGE_MS = 2_000;
/** The funnel, the days and the field-issue counts scan whole tables: read once a minute, in the background. */
const HEAVY_MAX_AGE_MS = 60_000;
const HEAVY_FIRST_WAIT_MS = 1_500;

const shapeQuery = z.object({
  runs: z.coerce.number().int().min(1).max(200).default(DEFAULT_SHAPE.runs),
  days: z.coerce.number().int().min(1).max(366).default(DEFAULT_SHAPE.days),
});

export const statusPagePlugin: FastifyPluginAsync<StatusPageOptions> = async (app, options) => {
  const refreshMs = options.refreshMs ?? DEFAULT_REFRESH_MS;
  const heavy = periodicHeavyReads(options, HEAVY_MAX_AGE_MS, HEAVY_FIRST_WAIT_MS);
  const cacheOf = perShape((key) => {
    const [runs, days] = key.split(":").map(Number) as [number, number];
    return new SnapshotCache(() => collectStatus(options, { runs, days }, heavy), SNAPSHOT_MAX_AGE_MS);
  });

  /** The snapshot the query asks for, or undefined after answering 400. */
  async function snapshotFor(query: unknown, reply: FastifyReply): Promise<StatusSnapshot | undefined> {
    const parsed = shapeQuery.safeParse(query);
    if (!parsed.success) {
      await reply.code(400).send({ message: parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ") });
      return undefined;
    }
    const shape: SnapshotShape = parsed.data;
    return cacheOf(`${shape.runs}:${shape.days}`).get();
  }

  const sendHtml = (reply: FastifyReply, body: string) => reply.type("text/html; charset=utf-8").header("cache-control", "no-store").send(body);

  app.get("/", async (request, reply) => {
    const snapshot = await snapshotFor(request.query, reply);
    if (snapshot) return sendHtml(reply, renderPage(snapshot, { refreshMs, mode: options.mode }).text);
    return reply;
  });

  app.get("/status/panels", async (request, reply) => {
    const snapshot = await snapshotFor(request.query, reply);
    if (snapshot) return sendHtml(reply, renderPanels(snapshot).text);
    return reply;
  });

  app.get("/api/status", async (request, reply) => {
    const snapshot = await snapshotFor(request.query, reply);
    if (snapshot) return reply.header("cache-control", "no-store").send(snapshot);
    return reply;
  });
};
