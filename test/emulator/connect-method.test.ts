import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { API_KEY_HEADER, PATHS } from "../../src/upstream/endpoints.ts";
import { parseJson, useEmulator } from "../support/emulator.ts";

/**
 * A CONNECT request to a known API path is answered like any other method. Node's HTTP server hands CONNECT to
 * a 'connect' event instead of the request handler, and closes the socket without a status line when nobody listens.
 *
 * contract A.2: "path known, method not | 405" and "Every error body is `{"message": "..."}`".
 * (Every other method on a known path, TRACE, PROPFIND, PURGE, QUERY..., answers 405 with Allow.)
 */

const emulator = useEmulator({ apiKeys: ["a"], seed: 5 });

function rawExchange(request: string): Promise<string> {
  const url = new URL(emulator().url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.write(request));
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(), 2_000);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString("utf8"));
    });
  });
}

describe("CONNECT on a known path (contract A.2: path known, method not is a 405)", () => {
  it.each([PATHS.campaigns, PATHS.campaign, PATHS.emailSequence])("CONNECT %s answers 405 {message} with an Allow header", async (path) => {
    const text = await rawExchange(`CONNECT ${path} HTTP/1.1\r\nHost: localhost\r\n${API_KEY_HEADER}: a\r\nConnection: close\r\n\r\n`);
    expect(text.slice(0, 12)).toBe("HTTP/1.1 405");
    expect(text.toLowerCase()).toMatch(/\r\nallow: [^\r]*get/);
    const body = parseJson(text.slice(text.indexOf("\r\n\r\n") + 4)) as Record<string, unknown> | undefined;
    expect(Object.keys(body ?? {})).toEqual(["message"]);
  });
});
