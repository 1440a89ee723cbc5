import { randomUUID } from "node:crypto";
import { sql, type Kysely } from "kysely";
import pg from "pg";
import type { Database } from "./database.ts";

/**
 * "One campaign is synced by one process at a time", kept by the warehouse
 * itself, so that it holds between a worker and `sync --once` (which has no
 * Redis), and whatever happens to Redis's keys.
 *
 * On PostgreSQL a lock is a session-level advisory lock held by a connection
 * of its own for the whole run (one connection for all the locks a run
 * takes): PostgreSQL releases them when that session ends,
 * so a process killed mid-run frees it at once, and a holder that loses the
 * connection (a restart, a failover) is told through its signal to stop before
 * someone else takes over. The embedded PGlite serves one process, so an
 * in-process set is all it needs.
 */

export interface RunLock {
  /** Aborts when the lock is lost (its connection broke); the run holding it must stop. */
  readonly signal: AbortSignal;
  release(): Promise<void>;
}

export interface RunLocks {
  /** The locks of `names`, all held together, or null (holding none) while another session holds one of them. */
  acquire(names: readonly string[]): Promise<RunLock | null>;
  /** Which of `names` some session holds right now. */
  held(db: Kysely<Database>, names: readonly string[]): Promise<ReadonlySet<string>>;
}

/** The lock a run holds for as long as it runs, recorded as its `holder`. */
export function runLockName(): string {
  return `coldsync:run:${randomUUID()}`;
}

/** One lock per campaign and rhythm: the leads walk and the events read of one campaign may run side by side. */
export function campaignLockName(account: string, campaignUid: string, rhythm: "leads" | "events"): string {
  return `coldsync:${account}:campaign:${campaignUid}:${rhythm}`;
}

/** One per account: its discovery's listings (workspaces, domains, contact lists) carry no observation time to order two discoveries' writes by. */
export function discoveryLockName(account: string): string {
  return `coldsync:${account}:discovery`;
}

/**
 * A lock's session sends nothing while its run lasts, so a server's `idle_session_timeout` (PostgreSQL 14+, which
 * DBAs and managed services set to reap forgotten sessions) would end it, and the lock with it, in every run
 * longer than the timeout: runs that never finish. The session opts out for itself; an older server has no such
 * setting to opt out of.
 */
const NEVER_IDLE_OUT = "DO $$ BEGIN PERFORM set_config('idle_session_timeout', '0', false); EXCEPTION WHEN undefined_object THEN NULL; END $$";

export class AdvisoryLocks implements RunLocks {
  readonly #connectionString: string;
  readonly #schema: string;
  readonly #onConnectionError: (error: Error) => void;

  /** Locks are per database; `schema` keeps the warehouses of one database (one schema each) from blocking each other. */
  constructor(connectionString: string, schema: string, onConnectionError: (error: Error) => void = () => undefined) {
    this.#connectionString = connectionString;
    this.#schema = schema;
    this.#onConnectionError = onConnectionError;
  }

  #key(name: string): string {
    return `${this.#schema}/${name}`;
  }

  async acquire(names: readonly string[]): Promise<RunLock | null> {
    const label = names.join(", ");
    // Keepalive: a server that vanishes without closing the connection (a failover, a partition) must still be
    // noticed, since the lock dies with the server's session.
    const client = new pg.Client({
      connectionString: this.#connectionString,
      application_name: "coldsync-lock",
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      connectionTimeoutMillis: 10_000,
    });
    const lost = new AbortController();
    let released = false;
    client.on("error", (error) => {
      if (released) return;
      this.#onConnectionError(error);
      lost.abort(new Error(`lost the lock ${label}: ${error.message}`));
    });
    await client.connect();
    try {
      await client.query(NEVER_IDLE_OUT);
      // Every lock is tried (one round trip); when one is taken elsewhere, ending the session lets go of the others.
      const { rows } = await client.query<{ held: boolean }>("SELECT bool_and(pg_try_advisory_lock(hashtextextended(name, 0))) AS held FROM unnest($1::text[]) AS name", [
        names.map((name) => this.#key(name)),
      ]);
      if (rows[0]?.held !== true) {
        released = true;
        await client.end();
        return null;
      }
    } catch (error) {
      released = true;
      await client.end().catch(() => undefined);
      throw error;
    }
    return {
      signal: lost.signal,
      release: async () => {
        if (released) return;
        released = true;
        // Ending the session releases its advisory locks; an explicit unlock would only add a round trip.
        await client.end().catch(() => undefined);
      },
    };
  }

  /** pg_locks shows a session-level advisory lock on a bigint key as two 32-bit halves (classid, objid). */
  async held(db: Kysely<Database>, names: readonly string[]): Promise<ReadonlySet<string>> {
    if (names.length === 0) return new Set();
    const byKey = new Map(names.map((name) => [this.#key(name), name]));
    const { rows } = await sql<{ name: string }>`
      SELECT name FROM unnest(CAST(${[...byKey.keys()]} AS text[])) AS name
       WHERE EXISTS (
         SELECT 1 FROM pg_locks l
          WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted
            AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended(name, 0))`.execute(db);
    return new Set(rows.map((row) => byKey.get(row.name) as string));
  }
}

export class InProcessLocks implements RunLocks {
  readonly #held = new Set<string>();

  async acquire(names: readonly string[]): Promise<RunLock | null> {
    if (names.some((name) => this.#held.has(name))) return null;
    for (const name of names) this.#held.add(name);
    return {
      signal: new AbortController().signal,
      release: async () => {
        for (const name of names) this.#held.delete(name);
      },
    };
  }

  async held(_db: Kysely<Database>, names: readonly string[]): Promise<ReadonlySet<string>> {
    return new Set(names.filter((name) => this.#held.has(name)));
  }
}
