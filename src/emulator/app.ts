import { STATUS_CODES, type IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { MAX_BODY_BYTES, registerBodyParsers } from "./http/bodies.ts";
import type { EmulatorContext } from "./http/context.ts";
import { ApiError } from "./http/errors.ts";
import { registerGate } from "./http/gate.ts";
import { parseQueryString, registerQueryCheck } from "./http/query.ts";
import { accountRoutes } from "./routes/account.ts";
import { adminRoutes } from "./routes/admin.ts";
import { campaignRoutes } from "./routes/campaigns.ts";
import { eventRoutes } from "./routes/events.ts";
import { leadRoutes } from "./routes/leads.ts";
import { sequenceRoutes } from "./routes/sequences.ts";

/**
 * The emulator's HTTP application. Every answer that is not a success is
 * `{"message": ...}`: fastify's own error and not-found answers are replaced,
 * unknown paths answer 404 and known paths with another method 405.
 */

/** Framework errors a client causes; everything else is a 500. */
function clientErrorMessage(error: FastifyError): string | undefined {
  switch (error.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return `body: larger than ${MAX_BODY_BYTES} bytes`;
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return `body: ${error.message}`;
    default:
      return error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.message : undefined;
  }
}

/**
 * A path (without query or fragment) as the router matches it: find-my-way
 * decodes it with decodeURI, so `/api/v1/campaign%73/` is the campaigns
 * listing while `%2F` stays a character, not a separator. The router answers a
 * malformed escape 400 before any handler; should one reach this all the same,
 * it is kept as sent and names nothing (404) rather than throwing (500).
 */
function asRouted(path: string): string {
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
}

const ABSOLUTE_FORM_ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

/** What a request Node's HTTP parser refused gets: the status fastify's own handler sends, with the contract's body. */
const MALFORMED: Record<string, [status: number, message: string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, "request: not received in time"],
  HPE_HEADER_OVERFLOW: [431, "headers: larger than the server accepts"],
};

/**
 * A request Node's HTTP parser refuses (a request line with raw non-ASCII bytes, a malformed header) never reaches
 * fastify's handlers: it is answered here, `{"message"}` like every other error (contract A.2), then closed.
 */
function answerMalformedRequest(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const [status, message] = MALFORMED[error.code ?? ""] ?? [400, `request: not a well-formed HTTP request (${error.code ?? error.message}); the target must be ASCII, other characters escaped as %XX`];
  answerOnSocket(socket, status, message);
  socket.destroy(error);
}

/** An answer written straight to a socket fastify never sees, `{"message"}` as every other error, then the end of it. */
function answerOnSocket(socket: Duplex, status: number, message: string, headers: Record<string, string> = {}): void {
  if (!socket.writable) return;
  const body = JSON.stringify({ message });
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join("");
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`);
}

export async function buildApp(context: EmulatorContext, admin: boolean): Promise<FastifyInstance> {
  const app = Fastify({
    logger: false,
    bodyLimit: MAX_BODY_BYTES,
    forceCloseConnections: true,
    routerOptions: { querystringParser: parseQueryString },
    clientErrorHandler: answerMalformedRequest,
    frameworkErrors: (error, _request, reply) => {
      // The hook's reply type is generic over route schemas the emulator does not use.
      void (reply as unknown as FastifyReply).code(400).send({ message: `request: ${error.message}` });
    },
  });
  const methodsByPath = new Map<string, Set<string>>();
  app.addHook("onRoute", (route) => {
    const methods = methodsByPath.get(route.url) ?? new Set<string>();
    for (const method of [route.method].flat()) methods.add(method);
    methodsByPath.set(route.url, methods);
  });

  await registerBodyParsers(app);
  // In wall-clock mode every answer, the admin ones included, sees simulated time caught up with real time.
  app.addHook("onRequest", async () => context.clock.catchUp());
  registerGate(app, context);
  registerQueryCheck(app);

  /** What a request no route takes gets: 405 with the methods its path allows, or 404 for a path the API has not. */
  const unrouted = (method: string, url: string): { status: 404 | 405; message: string; allowed?: string } => {
    // A target in absolute form (`http://host/api/v1/campaigns/`) names the path after its origin.
    const target = url.replace(ABSOLUTE_FORM_ORIGIN, "");
    const path = target.split(/[?#]/, 1)[0] ?? target;
    const methods = methodsByPath.get(asRouted(path));
    if (!methods) return { status: 404, message: `no such path: ${path}` };
    const allowed = [...methods].sort().join(", ");
    return { status: 405, message: `method ${method} is not allowed on ${path}; allowed: ${allowed}`, allowed };
  };
  const answerUnrouted = (request: FastifyRequest, reply: FastifyReply) => {
    const { status, message, allowed } = unrouted(request.method, request.url);
    if (allowed !== undefined) void reply.header("allow", allowed);
    return reply.code(status).send({ message });
  };
  // Node hands CONNECT to this event instead of the request handler, and closes the socket unanswered when nothing listens.
  app.server.on("connect", (request: IncomingMessage, socket: Duplex) => {
    const { status, message, allowed } = unrouted("CONNECT", request.url ?? "");
    answerOnSocket(socket, status, message, allowed === undefined ? {} : { Allow: allowed });
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof ApiError) return reply.code(error.status).send({ message: error.message });
    // A method with a body (QUERY) sent without a Content-Type fails before fastify looks for its route.
    if (error.code === "FST_ERR_ROUTE_MISSING_CONTENT_TYPE" && request.is404) return answerUnrouted(request, reply);
    const message = clientErrorMessage(error);
    if (message !== undefined) return reply.code(400).send({ message });
    context.logger?.error({ err: error }, "emulator: unexpected error");
    return reply.code(500).send({ message: "internal server error" });
  });

  app.setNotFoundHandler(answerUnrouted);

  await app.register(campaignRoutes, context);
  await app.register(sequenceRoutes, context);
  await app.register(leadRoutes, context);
  await app.register(eventRoutes, context);
  await app.register(accountRoutes, context);
  if (admin) await app.register(adminRoutes, context);
  return app;
}
