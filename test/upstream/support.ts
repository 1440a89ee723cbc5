import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { inspect } from "node:util";
import { afterEach } from "vitest";
import { createLogger, type Logger } from "../../src/logger.ts";
import { UpstreamClient, type UpstreamClientOptions } from "../../src/upstream/client.ts";

export interface LocalServer {
  url: string;
  /** Every request received, in order, as "METHOD /path?query". */
  requests: string[];
  /** TCP connections accepted so far. */
  connections: () => number;
  close: () => Promise<void>;
}

/** A real HTTP server on a free port, for answers the emulator never gives (bad records, cut bodies, HTML pages). */
export async function startLocalServer(handler: (request: IncomingMessage, response: ServerResponse, index: number) => void): Promise<LocalServer> {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    handler(request, response, requests.length - 1);
  });
  let connections = 0;
  server.on("connection", () => {
    connections += 1;
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    connections: () => connections,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

/** Local servers and clients for a test file's tests, each closed after the test that opened it. */
export function useLocalServers(): { serve: typeof startLocalServer; connect(options: UpstreamClientOptions): UpstreamClient } {
  const opened: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    // Clients first: a server waits for the connections still open to it.
    for (const each of opened.splice(0).reverse()) await each.close();
  });
  return {
    serve: async (handler) => {
      const server = await startLocalServer(handler);
      opened.push(server);
      return server;
    },
    connect: (options) => {
      const client = new UpstreamClient(options);
      opened.push(client);
      return client;
    },
  };
}

export function sendJson(response: ServerResponse, status: number, body: unknown, rewriteText: (text: string) => string = (text) => text): void {
  const text = rewriteText(JSON.stringify(body));
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  response.end(text);
}

/** A debug logger that writes into memory, so a test can read every line it produced. */
export function memoryLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { logger: createLogger({ level: "debug", destination }), lines };
}

/** Everything an error exposes: its JSON form and its inspected form, which includes `cause` and the stack. */
export function everythingIn(error: unknown): string {
  let json: string;
  try {
    json = JSON.stringify(error, Object.getOwnPropertyNames(error ?? {}));
  } catch {
    json = "";
  }
  return `${json}\n${inspect(error, { depth: 10, showHidden: true })}`;
}

export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the promise to reject");
}

/**
 * A text as its readers recover it at once: as written, JSON's escapes undone (`\u0073`, `\/`), percent-decoded,
 * HTML's character references undone. A secret must be in none of them.
 */
export function readableForms(text: string): string[] {
  const json = text.replace(/\\u([0-9a-fA-F]{4})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16))).replace(/\\\//g, "/");
  let url = text;
  try {
    url = decodeURIComponent(text);
  } catch {
    // not decodable as a whole (a stray %): each escape on its own
    url = text.replace(/%[0-9a-fA-F]{2}/g, (escape) => String.fromCharCode(parseInt(escape.slice(1), 16)));
  }
  const named: Record<string, string> = { sol: "/", plus: "+", amp: "&", quot: '"', lt: "<", gt: ">" };
  const html = text
    .replace(/&#x([0-9a-f]+);?/gi, (_match, hex: string) => String.fromCodePoint(parseInt(hex, 16)))
    .replace(/&#(\d+);?/g, (_match, decimal: string) => String.fromCodePoint(Number(decimal)))
    .replace(/&([a-z]+);/gi, (match, name: string) => named[name] ?? match);
  return [text, json, url, html];
}
