import { once } from "node:events";
import { createServer, connect, type AddressInfo, type Server, type Socket } from "node:net";

/**
 * A port that stands for a dependency (PostgreSQL, Redis) which can be taken
 * away and given back: closed, a connection is refused, as with a server that
 * is down; open, every connection is forwarded to the real server. Closing it
 * also cuts the connections it forwards, as a restart would.
 */
export class TcpGate {
  readonly port: number;
  readonly #target: { host: string; port: number };
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();

  private constructor(port: number, target: { host: string; port: number }) {
    this.port = port;
    this.#target = target;
  }

  /** A free port standing for `targetUrl`'s server, closed until open(). */
  static async reserve(targetUrl: string): Promise<TcpGate> {
    const target = new URL(targetUrl);
    return new TcpGate(await freePort(), { host: target.hostname, port: Number(target.port) });
  }

  /** `url` with its port replaced by the gate's. */
  rewrite(url: string): string {
    const parsed = new URL(url);
    parsed.port = String(this.port);
    return parsed.toString();
  }

  async open(): Promise<void> {
    if (this.#server) return;
    const server = createServer((client) => {
      const upstream = connect(this.#target.port, this.#target.host);
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on("close", () => this.#sockets.delete(socket));
        socket.on("error", () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    server.listen(this.port, "127.0.0.1");
    await once(server, "listening");
    this.#server = server;
  }

  async close(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const socket of this.#sockets) socket.destroy();
    if (server) await new Promise((resolve) => server.close(resolve));
  }
}

/** A port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const probe = createServer().listen(0, "127.0.0.1");
  await once(probe, "listening");
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
