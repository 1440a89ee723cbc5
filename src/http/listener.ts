import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * The worker's port, open from its first moment. While the worker waits for a
 * dependency (PostgreSQL or Redis down at start-up) the starting handler
 * answers the probes: /livez 200 (the process is alive, restarting it would
 * not help), /readyz and /healthz 503 naming what it waits for. Once the
 * worker is up, its full server takes over the same socket, so a probe never
 * finds the port closed in between.
 */

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

export const LIVENESS_PATH = "/livez";
export const READINESS_PATHS: readonly string[] = ["/readyz", "/healthz"];

export class HttpListener {
  readonly server: Server;
  readonly url: string;
  readonly #handOver: (handler: Handler) => void;

  private constructor(server: Server, url: string, handOver: (handler: Handler) => void) {
    this.server = server;
    this.url = url;
    this.#handOver = handOver;
  }

  /** Listens at once; until `serve()`, answers as a worker that is still starting and waits for `waitingFor()`. */
  static async open(host: string, port: number, waitingFor: () => string): Promise<HttpListener> {
    let handler: Handler = startingHandler(waitingFor);
    const server = createServer((request, response) => handler(request, response));
    server.listen(port, host);
    await once(server, "listening");
    const address = server.address() as AddressInfo;
    const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
    return new HttpListener(server, `http://${shownHost}:${address.port}`, (next) => (handler = next));
  }

  /** Hands every later request to `handler` (Fastify's, through its serverFactory). */
  serve(handler: Handler): void {
    this.#handOver(handler);
  }

  async close(): Promise<void> {
    if (!this.server.listening) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function startingHandler(waitingFor: () => string): Handler {
  return (request, response) => {
    const path = (request.url ?? "/").split("?")[0] ?? "/";
    const live = path === LIVENESS_PATH;
    const body = live
      ? { live: true }
      : READINESS_PATHS.includes(path)
        ? { ok: false, starting: true, waitingFor: waitingFor() }
        : { message: `starting: waiting for ${waitingFor()}` };
    response.writeHead(live ? 200 : 503, { "content-type": "application/json; charset=utf-8" });
    response.end(JSON.stringify(body));
  };
}
