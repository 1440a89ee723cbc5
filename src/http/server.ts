import { createHash, timingSafeEqual } from "node:crypto";
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { FastifyAdapter } from "@bull-board/fastify";
import type { Queue } from "bullmq";
import Fastify, { LogController, type FastifyReply, type FastifyRequest } from "fastify";
import type { Registry } from "prom-client";
import type { Logger } from "../logger.ts";
import { checkHealth, type HealthDependencies } from "./health.ts";

/**
 * The worker's HTTP side: /healthz for probes, /metrics for Prometheus and
 * /admin/queues (Bull Board) for people. With a token configured, everything
 * but /healthz wants `Authorization: Bearer <token>`: the dashboard can retry
 * and delete jobs, and metrics name campaigns.
 */

const ADMIN_QUEUES_PATH = "/admin/queues";

export interface HttpServerOptions {
  host: string;
  port: number;
  /** COLDSYNC_HTTP_TOKEN; undefined leaves every route open. */
  token: string | undefined;
  registry: Registry;
  queues: readonly Queue[];
  health: HealthDependencies;
  logger?: Logger;
}

export interface HttpServer {
  /** Where it listens, e.g. http://127.0.0.1:9464 */
  url: string;
  close(): Promise<void>;
}

export async function startHttpServer(options: HttpServerOptions): Promise<HttpServer> {
  const app = Fastify({
    // Probes and scrapes every few seconds would drown the sync's own lines.
    logController: new LogController({ disableRequestLogging: true }),
    ...(options.logger ? { loggerInstance: options.logger.child({ component: "http" }) } : {}),
  });
  if (options.token !== undefined) app.addHook("onRequest", bearerCheck(options.token));

  app.get("/healthz", async (_request, reply) => {
    const report = await checkHealth(options.health);
    return reply.code(report.ok ? 200 : 503).send(report);
  });

  app.get("/metrics", async (_request, reply) => {
    const body = await options.registry.metrics();
    return reply.type(options.registry.contentType).send(body);
  });

  const board = new FastifyAdapter();
  board.setBasePath(ADMIN_QUEUES_PATH);
  createBullBoard({ queues: options.queues.map((queue) => new BullMQAdapter(queue)), serverAdapter: board });
  await app.register(board.registerPlugin(), { prefix: ADMIN_QUEUES_PATH });

  const address = await app.listen({ host: options.host, port: options.port });
  return { url: address, close: () => app.close() };
}

function bearerCheck(token: string): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const expected = digest(token);
  return async (request, reply) => {
    if (request.routeOptions.url === "/healthz") return;
    const match = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? "");
    // Comparing digests keeps the comparison constant-time whatever the lengths.
    if (match?.[1] !== undefined && timingSafeEqual(digest(match[1].trim()), expected)) return;
    await reply.code(401).header("www-authenticate", 'Bearer realm="coldsync"').send({ message: "missing or wrong bearer token" });
  };
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}
