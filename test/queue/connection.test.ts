import { Worker } from "bullmq";
import type { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { connectRedis } from "../../src/queue/connection.ts";
import { useTestRedis } from "../support/redis.ts";
import { freePort, TcpGate } from "../support/tcp-gate.ts";

/**
 * A connection waiting between two reconnect attempts must still end when it
 * is closed: BullMQ's Worker.close() waits for its blocking connection's 'end'
 * (taskforcesh/bullmq#4656), which plain ioredis never emits in that state.
 */

const testRedis = useTestRedis("connection");
const opened: { disconnect(): void }[] = [];
afterEach(() => {
  for (const connection of opened.splice(0)) connection.disconnect();
});

/** Not events.once: it rejects on the connection's 'error', which here only means "not yet". */
const next = (emitter: NodeJS.EventEmitter, event: string) => new Promise<void>((resolve) => emitter.once(event, () => resolve()));

async function parkedConnection() {
  const redis = connectRedis(`redis://127.0.0.1:${await freePort()}`, "worker");
  opened.push(redis);
  await next(redis, "reconnecting");
  return redis;
}

describe("a connection parked between reconnect attempts", () => {
  it("ends when disconnected, and its queued commands fail instead of waiting forever", async () => {
    const redis = await parkedConnection();
    const queued = redis.ping();
    const ended = next(redis, "end");

    redis.disconnect();

    await ended;
    expect(redis.status).toBe("end");
    await expect(queued).rejects.toThrow(/Connection is closed/);
  });

  it("hands the same ending to the connections duplicated from it", async () => {
    const redis = await parkedConnection();
    const duplicate = redis.duplicate();
    opened.push(duplicate);
    duplicate.on("error", () => undefined);
    await next(duplicate, "reconnecting");
    const ended = next(duplicate, "end");

    duplicate.disconnect();

    await ended;
  });

  it("lets a BullMQ worker closed while Redis is away finish closing once Redis is back", async () => {
    const gate = await TcpGate.reserve(testRedis.url);
    await gate.open();
    const redis = connectRedis(gate.rewrite(testRedis.url), "worker");
    opened.push(redis);
    // The worker's blocking connection is duplicated from this one: kept here to see its state.
    const duplicates: Redis[] = [];
    const duplicate = redis.duplicate.bind(redis);
    redis.duplicate = (override) => {
      const made = duplicate(override);
      duplicates.push(made);
      return made;
    };
    const worker = new Worker("parked", async () => undefined, { connection: redis, prefix: testRedis.prefix });
    worker.on("error", () => undefined);
    await worker.waitUntilReady();
    await expect.poll(() => duplicates.map((connection) => connection.status), { timeout: 10_000 }).toEqual(["ready"]);

    await gate.close();
    // Its blocking connection dropped too, and waits for its next attempt.
    await expect.poll(() => duplicates.map((connection) => connection.status), { timeout: 10_000, interval: 5 }).toEqual(["reconnecting"]);

    // Closing ends the parked connection; the commands BullMQ has waiting on the other one need Redis back.
    const closed = worker.close();
    await gate.open();
    await expect(closed).resolves.toBeUndefined();
    await gate.close();
  });
});
