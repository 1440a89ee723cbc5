import { createHash, timingSafeEqual } from "node:crypto";
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { FastifyAdapter } from "@bull-board/fastify";
import type { Queue } from "bullmq";
import Fastify, { LogController, type FastifyReply, type FastifyRequest } from "fastify";
import type { Registry } from "prom-client";
import type { Logger } from "../logger.ts";
import { checkHealth, type HealthDependencies } from "./health.ts";
import { HttpListener, LIVENESS_PATH, READINESS_PATHS } from "./listener.ts";
import { statusPagePlugin, type StatusPageOptions } from "./status-page/plugin.ts";

/**
 * The worker's HTTP side: /livez and /readyz (with /healthz, the same as
 * /readyz) for probes, /metrics for Prometheus, /admin/queues (Bull Board) and
 * the status page (/) for people. With a token configured, everything but the
 * probes wants `Authorization: Bearer <token>`: the dashboard can retry and
 * delete jobs, and metrics name campaigns. A browser cannot send a bearer
 * token, so HTTP Basic with the token as the password (any user name) is
 * accepted too, and a 401 offers both: the browser asks for it once and sends
 * it with every request after.
 */

const ADMIN_QUEUES_PATH = "/admin/queues";
const PROBE_PATHS = new Set([LIVENESS_PATH, ...READINESS_PATHS]);

export interface HttpServerOptions {
  host: string;
  port: number;
  /** COLDSYNC_HTTP_TOKEN; undefined leaves every route open. */
  token: string | undefined;
  registry: Registry;
  queues: readonly Queue[];
  health: HealthDependencies;
  logger?: Logger;
  /** A port opened earlier (the worker opens it before waiting for its dependencies); host and port are then ignored. */
  listener?: HttpListener;
  /** Serves the status page at / when given (the worker's sources: warehouse, queues, upstream). */
  statusPage?: Omit<StatusPageOptions, "fleet"> & { fleet?: Omit<NonNullable<StatusPageOptions["fleet"]>, "boardPath"> };
}

export interface HttpServer {
  /** Where it listens, e.g. http://127.0.0.1:9464 */
  url: string;
  close(): Promise<void>;
}

/** Fastify on the listener's socket, with the token check every route but the probes go through. */
function createApp(options: { token: string | undefined; logger?: Logger }, listener: HttpListener) {
  const app = Fastify({
    // Probes, scrapes and page refreshes every few seconds would drown the sync's own lines.
    logController: new LogController({ disableRequestLogging: true }),
    ...(options.logger ? { loggerInstance: options.logger.child({ component: "http" }) } : {}),
    serverFactory: (handler) => {
      listener.serve(handler);
      return listener.server;
    },
  });
  if (options.token !== undefined) app.addHook("onRequest", bearerCheck(options.token));
  return app;
}

async function serve(app: ReturnType<typeof createApp>, listener: HttpListener): Promise<HttpServer> {
  await app.ready();
  return {
    url: listener.url,
    close: async () => {
      await app.close();
      await listener.close();
    },
  };
}

export async function startHttpServer(options: HttpServerOptions): Promise<HttpServer> {
  const listener = options.listener ?? (await HttpListener.open(options.host, options.port, () => "the HTTP server"));
  const app = createApp(options, listener);

  app.get(LIVENESS_PATH, async () => ({ live: true }));
  for (const path of READINESS_PATHS) {
    app.get(path, async (_request, reply) => {
      const report = await checkHealth(options.health);
      return reply.code(report.ok ? 200 : 503).send(report);
    });
  }

  app.get("/metrics", async (_request, reply) => {
    const body = await options.registry.metrics();
    return reply.type(options.registry.contentType).send(body);
  });

  const board = new FastifyAdapter();
  board.setBasePath(ADMIN_QUEUES_PATH);
  // Without a token anyone who reaches the port sees the dashboard: it may look, but not retry, remove or clean jobs.
  const readOnlyMode = options.token === undefined;
  createBullBoard({ queues: options.queues.map((queue) => new BullMQAdapter(queue, { readOnlyMode })), serverAdapter: board });
  await app.register(board.registerPlugin(), { prefix: ADMIN_QUEUES_PATH });

  if (options.statusPage) {
    const { fleet, ...page } = options.statusPage;
    await app.register(statusPagePlugin, { ...page, ...(fleet ? { fleet: { ...fleet, boardPath: ADMIN_QUEUES_PATH } } : {}) });
  }
  return serve(app, listener);
}

export interface StatusPageServerOptions {
  host: string;
  port: number;
  token: string | undefined;
  statusPage: StatusPageOptions;
  logger?: Logger;
}

/** The status page alone, for a process without queues or metrics (`coldsync demo --serve`). */
export async function startStatusPageServer(options: StatusPageServerOptions): Promise<HttpServer> {
  const listener = await HttpListener.open(options.host, options.port, () => "the HTTP server");
  const app = createApp(options, listener);
  await app.register(statusPagePlugin, options.statusPage);
  return serve(app, listener);
}

function bearerCheck(token: string): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const expected = digest(token);
  return async (request, reply) => {
    if (request.routeOptions.url !== undefined && PROBE_PATHS.has(request.routeOptions.url)) return;
    const offered = offeredToken(request.headers.authorization);
    // Comparing digests keeps the comparison constant-time whatever the lengths.
    if (offered !== undefined && timingSafeEqual(digest(offered), expected)) return;
    await reply
      .code(401)
      .header("www-authenticate", ['Bearer realm="coldsync"', 'Basic realm="coldsync", charset="UTF-8"'])
      .send({ message: "missing or wrong bearer token" });
  };
}

/** The token from `Bearer <token>`, or the password of `Basic base64(user:password)`. */
function offeredToken(authorization: string | undefined): string | undefined {
  const match = /^(Bearer|Basic)\s+(.+)$/i.exec(authorization ?? "");
  if (!match?.[1] || match[2] === undefined) return undefined;
  if (match[1].toLowerCase() === "bearer") return match[2].trim();
  const credentials = Buffer.from(match[2].trim(), "base64").toString("utf8");
  const colon = credentials.indexOf(":");
  return colon === -1 ? undefined : credentials.slice(colon + 1);
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}
