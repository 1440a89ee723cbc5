import { once } from "node:events";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A real HTTP proxy in front of an upstream (the emulator) that rewrites the
 * JSON of chosen answers: how tests meet an upstream that deviates from its
 * document in ways our own emulator does not, one field at a time.
 */

/** Rewrites the parsed JSON of a 200 answer to `path` (with its query); returns the body to send. */
export type Rewrite = (path: string, query: URLSearchParams, body: unknown) => unknown;

export interface DeviatingProxy {
  url: string;
  close(): Promise<void>;
}

export async function startDeviatingProxy(target: string, rewrite: Rewrite): Promise<DeviatingProxy> {
  const server: Server = createServer((incoming, outgoing) => {
    const forwarded = request(`${target}${incoming.url ?? "/"}`, { method: incoming.method, headers: incoming.headers }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on("data", (chunk: Buffer) => chunks.push(chunk));
      answer.on("end", () => {
        let body = Buffer.concat(chunks).toString();
        if (answer.statusCode === 200) {
          const url = new URL(incoming.url ?? "/", "http://proxy");
          body = JSON.stringify(rewrite(url.pathname, url.searchParams, JSON.parse(body)));
        }
        outgoing.writeHead(answer.statusCode ?? 502, { "content-type": "application/json" });
        outgoing.end(body);
      });
    });
    incoming.pipe(forwarded);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}
