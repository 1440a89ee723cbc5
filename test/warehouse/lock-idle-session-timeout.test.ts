import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { AdvisoryLocks } from "../../src/warehouse/run-locks.ts";
import { useTestDatabase } from "../support/database.ts";

/**
 * A warehouse whose DBA set `idle_session_timeout` (PostgreSQL 14+; managed services and hardening guides set it
 * to reap forgotten sessions). A run's lock session sends nothing for the whole run, so PostgreSQL ended it once
 * the run outlasted the timeout: the run was told it lost its lock and stopped, was requeued, resumed from its
 * checkpoint and stopped again, a walk that never proved itself, and the worker reported PostgreSQL unreachable.
 */

const databaseUrl = useTestDatabase("lock_idle_timeout");

beforeAll(async () => {
  const client = new pg.Client({ connectionString: databaseUrl() });
  await client.connect();
  try {
    await client.query(`ALTER DATABASE ${client.escapeIdentifier(new URL(databaseUrl()).pathname.slice(1))} SET idle_session_timeout = '300ms'`);
  } finally {
    await client.end();
  }
});

describe("a run lock on a server with idle_session_timeout", () => {
  it("is held for as long as its run lasts, however long it sends nothing", async () => {
    const errors: Error[] = [];
    const locks = new AdvisoryLocks(databaseUrl(), "coldsync", (error) => errors.push(error));
    const lock = await locks.acquire(["coldsync:acme:campaign:c1:leads"]);
    expect(lock).not.toBeNull();
    await sleep(1_200);
    expect({ lost: lock?.signal.aborted, errors: errors.map((error) => error.message) }).toEqual({ lost: false, errors: [] });
    expect(await locks.acquire(["coldsync:acme:campaign:c1:leads"])).toBeNull();
    await lock?.release();
    const again = await locks.acquire(["coldsync:acme:campaign:c1:leads"]);
    expect(again).not.toBeNull();
    await again?.release();
  });
});
