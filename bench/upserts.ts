import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { pathToFileURL } from "node:url";
import { sql, type Kysely } from "kysely";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import type { Database } from "../src/warehouse/database.ts";
import { openWarehouse, type Warehouse } from "../src/warehouse/connect.ts";
import { migrateToLatest } from "../src/warehouse/migrate.ts";
import type { RowInput } from "../src/warehouse/tables.ts";
import { upsert } from "../src/warehouse/upsert.ts";
import { printResults, type Target } from "./report.ts";

/**
 * bench/upserts: the warehouse's write path against PostgreSQL's fastest load.
 *
 *   new     upsert() of 100,000 new schedules rows (the largest table, five indexes)
 *   replay  the same upsert() again, unchanged: it must write no tuple at all
 *   COPY    the same rows COPY'd into an UNLOGGED copy of the table with the
 *           same indexes: the fastest way PostgreSQL loads rows into that shape,
 *           so the ratio prices the upsert itself (conflict checks, dedupe, WAL).
 *           A COPY into an index-free UNLOGGED table is printed for scale.
 *
 * Each figure is the best of a few rounds, all in one run against a scratch
 * database on DATABASE_URL, created and dropped here.
 */

const ROWS = 100_000;
const ROUNDS = 3;
const SCHEMA = "coldsync";
const COPY_CHUNK_ROWS = 2_000;

type ScheduleRow = RowInput<"schedules">;

function scheduleRows(): ScheduleRow[] {
  const start = Date.UTC(2024, 2, 1, 8);
  return Array.from({ length: ROWS }, (_, index) => {
    const scheduledAt = start + index * 37_000;
    const sent = index % 4 !== 3;
    const opened = sent && index % 3 === 0;
    return {
      id: 40_000_000 + index,
      lead_uid: `ld_${(index >> 2).toString(36).padStart(8, "0")}${(index * 7919).toString(16).slice(-6)}`,
      campaign_uid: `cmp_${(index % 40).toString().padStart(4, "0")}`,
      email_sequence_id: 9_000 + (index % 40) * 4 + (index % 4),
      status: "created",
      schedule_datetime: new Date(scheduledAt),
      sent_on: sent ? new Date(scheduledAt + 95_000) : null,
      reply_received: sent && index % 23 === 0,
      email_opened: opened,
      email_opened_on: opened ? new Date(scheduledAt + 3_600_000) : null,
      email_open_count: opened ? 1 + (index % 3) : 0,
      _extra: null,
    };
  });
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function onServer<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Seconds taken by `work`. */
async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return (performance.now() - started) / 1000;
}

/** PostgreSQL's text COPY format: tab-separated, \N for NULL, backslash escapes. */
function copyField(value: unknown): string {
  if (value === null || value === undefined) return "\\N";
  if (value instanceof Date) return value.toISOString();
  return String(value).replace(/\\/g, "\\\\").replace(/\t/g, "\\t").replace(/\n/g, "\\n").replace(/\r/g, "\\r");
}

async function copyRows(client: pg.Client, table: string, rows: readonly ScheduleRow[], syncedAt: Date): Promise<void> {
  const columns = Object.keys(rows[0] as object) as (keyof ScheduleRow)[];
  const stamp = syncedAt.toISOString();
  function* chunks() {
    for (let start = 0; start < rows.length; start += COPY_CHUNK_ROWS) {
      let text = "";
      for (const row of rows.slice(start, start + COPY_CHUNK_ROWS)) text += `${columns.map((column) => copyField(row[column])).join("\t")}\t${stamp}\t${stamp}\n`;
      yield text;
    }
  }
  const target = client.query(copyFrom(`COPY ${table} (${columns.join(", ")}, _synced_at, _first_seen_at) FROM STDIN`));
  await pipeline(Readable.from(chunks()), target);
}

/** Tuples inserted or updated in `schedules` so far, as the statistics collector counts them. */
async function tuplesWritten(db: Kysely<Database>): Promise<number> {
  const { rows } = await sql<{ written: number }>`
    SELECT n_tup_ins + n_tup_upd AS written FROM pg_stat_user_tables
     WHERE schemaname = ${SCHEMA} AND relname = 'schedules'`.execute(db);
  return rows[0]?.written ?? 0;
}

/**
 * Statistics reach pg_stat_user_tables when a backend flushes them. The writer
 * asks for a flush and writes one row to a sentinel table; once the sentinel's
 * row shows up, everything that backend counted before it has arrived too.
 */
async function flushStatistics(writer: Kysely<Database>, reader: Kysely<Database>, marker: number): Promise<void> {
  await sql`INSERT INTO bench_flush_sentinel VALUES (${marker})`.execute(writer);
  await sql`SELECT pg_stat_force_next_flush()`.execute(writer);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { rows } = await sql<{ seen: number }>`
      SELECT n_tup_ins AS seen FROM pg_stat_user_tables WHERE schemaname = ${SCHEMA} AND relname = 'bench_flush_sentinel'`.execute(reader);
    if ((rows[0]?.seen ?? 0) >= marker) return;
    if (Date.now() > deadline) throw new Error("table statistics were not flushed within 30 s");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

interface Round {
  newSeconds: number;
  replaySeconds: number;
  replayTuples: number;
  copySeconds: number;
  bareCopySeconds: number;
}

async function round(warehouse: Warehouse, copyClient: pg.Client, rows: readonly ScheduleRow[], number: number): Promise<Round> {
  const { db } = warehouse;
  await sql`TRUNCATE schedules, schedules_copy, schedules_bare_copy`.execute(db);
  await sql`CHECKPOINT`.execute(db);
  return db.connection().execute(async (writer) => {
    const newSeconds = await timed(() => upsert(writer, "schedules", rows, new Date()));
    await flushStatistics(writer, db, 2 * number - 1);
    const before = await tuplesWritten(db);
    const replaySeconds = await timed(() => upsert(writer, "schedules", rows, new Date()));
    await flushStatistics(writer, db, 2 * number);
    const replayTuples = (await tuplesWritten(db)) - before;
    const copySeconds = await timed(() => copyRows(copyClient, "schedules_copy", rows, new Date()));
    const bareCopySeconds = await timed(() => copyRows(copyClient, "schedules_bare_copy", rows, new Date()));
    return { newSeconds, replaySeconds, replayTuples, copySeconds, bareCopySeconds };
  });
}

export async function runUpsertBench(): Promise<Target[]> {
  const serverUrl = process.env.DATABASE_URL;
  if (serverUrl === undefined || serverUrl === "") throw new Error("bench/upserts needs DATABASE_URL (a PostgreSQL server it may create a scratch database on)");
  const database = `coldsync_bench_upserts_${randomBytes(4).toString("hex")}`;
  await onServer(serverUrl, (client) => client.query(`CREATE DATABASE ${database}`));
  const url = withDatabase(serverUrl, database);
  try {
    const warehouse = await openWarehouse({ databaseUrl: url, dataDir: ".coldsync", schema: SCHEMA });
    const copyClient = new pg.Client({ connectionString: url, options: `-c search_path=${SCHEMA}` });
    await copyClient.connect();
    try {
      await migrateToLatest(warehouse);
      await sql`CREATE UNLOGGED TABLE schedules_copy (LIKE schedules INCLUDING ALL)`.execute(warehouse.db);
      await sql`CREATE UNLOGGED TABLE schedules_bare_copy (LIKE schedules)`.execute(warehouse.db);
      await sql`CREATE TABLE bench_flush_sentinel (marker integer)`.execute(warehouse.db);
      const rows = scheduleRows();
      const rounds: Round[] = [];
      for (let number = 1; number <= ROUNDS; number += 1) rounds.push(await round(warehouse, copyClient, rows, number));
      const best = (pick: (round: Round) => number) => Math.min(...rounds.map(pick));
      const perSecond = (seconds: number) => Math.round(ROWS / seconds);
      const newRate = perSecond(best((r) => r.newSeconds));
      const copyRate = perSecond(best((r) => r.copySeconds));
      console.log(`\nbench/upserts: ${ROWS.toLocaleString("en")} schedules rows, best of ${ROUNDS} rounds`);
      console.log(`  upsert, new rows        ${newRate.toLocaleString("en").padStart(9)} rows/s`);
      console.log(`  upsert, unchanged replay${perSecond(best((r) => r.replaySeconds)).toLocaleString("en").padStart(9)} rows/s`);
      console.log(`  COPY into UNLOGGED      ${copyRate.toLocaleString("en").padStart(9)} rows/s  (same indexes)`);
      console.log(`  COPY into UNLOGGED      ${perSecond(best((r) => r.bareCopySeconds)).toLocaleString("en").padStart(9)} rows/s  (no index, for scale)`);
      const targets: Target[] = [
        { name: "new-row upsert / COPY", value: newRate / copyRate, limit: 0.5, lowerIsBetter: false },
        { name: "tuples written by unchanged replay", value: Math.max(...rounds.map((r) => r.replayTuples)), limit: 0, lowerIsBetter: true },
      ];
      printResults(targets);
      return targets;
    } finally {
      await copyClient.end();
      await warehouse.destroy();
    }
  } finally {
    await onServer(serverUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const targets = await runUpsertBench();
  process.exitCode = targets.every((target) => target.pass) ? 0 : 1;
}
