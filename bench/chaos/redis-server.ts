import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";

/**
 * A redis-server of the chaos run's own, on a free port, never the user's.
 * It keeps nothing on disk by itself; stopping it can keep its keys (an RDB
 * snapshot written on shutdown and loaded on start) or drop them all (no
 * snapshot), as a Redis without persistence does on every restart.
 */

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, "close");
  return port;
}

export class OwnRedis {
  readonly port: number;
  readonly #dir: string;
  #process: ChildProcess | undefined;

  private constructor(port: number, dir: string) {
    this.port = port;
    this.#dir = dir;
  }

  static async start(): Promise<OwnRedis> {
    const redis = new OwnRedis(await freePort(), await mkdtemp(join(tmpdir(), "coldsync-chaos-redis-")));
    await redis.#spawn();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async #spawn(): Promise<void> {
    const child = spawn("redis-server", ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", this.#dir, "--dbfilename", "dump.rdb"], {
      stdio: "ignore",
    });
    this.#process = child;
    // The server takes a moment to listen; until then a connection is refused.
    for (let attempt = 1; ; attempt += 1) {
      const client = new Redis(this.url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
      client.on("error", () => undefined);
      try {
        await client.connect();
        await client.ping();
        return;
      } catch (error) {
        if (attempt >= 100 || child.exitCode !== null) throw error;
        await sleep(50);
      } finally {
        client.disconnect();
      }
    }
  }

  /** Stops the server; `keepKeys` writes a snapshot first, which the next start loads. */
  async stop(keepKeys: boolean): Promise<void> {
    const child = this.#process;
    if (child === undefined || child.exitCode !== null) return;
    if (!keepKeys) await rm(join(this.#dir, "dump.rdb"), { force: true });
    const client = new Redis(this.url, { maxRetriesPerRequest: 1 });
    client.on("error", () => undefined);
    const exited = once(child, "exit");
    // SHUTDOWN closes the connection instead of answering.
    await client.call("SHUTDOWN", keepKeys ? "SAVE" : "NOSAVE").catch(() => undefined);
    client.disconnect();
    await exited;
    this.#process = undefined;
  }

  async start(): Promise<void> {
    await this.#spawn();
  }

  async destroy(): Promise<void> {
    await this.stop(false);
    await rm(this.#dir, { recursive: true, force: true });
  }
}
