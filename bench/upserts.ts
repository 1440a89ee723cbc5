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
import { createScratchDatabase } from "../src/warehouse/scratch-database.ts";
import { upsert } from "../src/warehouse/upsert.ts";
import { printResults, type Target } from "./report.ts";

/**
 * bench/upserts: the warehouse's write path against PostgreSQL's fastest load,
 * for the two largest tables: schedules (11 columns, five indexes) and leads.
 *
 *   new     upsert() of 100,000 new rows
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

type BenchTable = "schedules" | "leads";
type Row = Record<string, unknown>;

function scheduleRows(): RowInput<"schedules">[] {
  const start = Date.UTC(2024, 2, 1, 8);
  return Array.from({ length: ROWS }, (_, index) => {
    const scheduledAt = start + index * 37_000;
    const sent = index % 4 !== 3;
    const opened = sent && index % 3 === 0;
    return {
      id: 40_000_000 + index,
      lead_uid: leadUid(index >> 2),
      campaign_uid: campaignUid(index),
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

function leadRows(): RowInput<"leads">[] {
  return Array.from({ length: ROWS }, (_, index) => ({
    uid: leadUid(index),
    campaign_uid: campaignUid(index),
    contact_id: 7_000_000 + index,
    sender_email_address: `sdr${index % 12}@outreach.example.com`,
    sender_name: `Sales Rep ${index % 12}`,
    _extra: null,
  }));
}

const leadUid = (index: number) => `ld_${index.toString(36).padStart(8, "0")}${((index * 7919) % 65_536).toString(16).padStart(4, "0")}`;
const campaignUid = (index: number) => `cmp_${(index % 40).toString().padStart(4, "0")}`;

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

async function copyRows(client: pg.Client, table: string, rows: readonly Row[], syncedAt: Date): Promise<void> {
  const columns = Object.keys(rows[0] as Row);
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

/** Tuples inserted or updated in `table` so far, as the statistics collector counts them. */
async function tuplesWritten(db: Kysely<Database>, table: BenchTable): Promise<number> {
  const { rows } = await sql<{ written: number }>`
    SELECT n_tup_ins + n_tup_upd AS written FROM pg_stat_user_tables
     WHERE schemaname = ${SCHEMA} AND relname = ${table}`.execute(db);
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

async function round(warehouse: Warehouse, copyClient: pg.Client, table: BenchTable, rows: readonly Row[], marker: number): Promise<Round> {
  const { db } = warehouse;
  await sql`TRUNCATE ${sql.table(table)}, ${sql.table(`${table}_copy`)}, ${sql.table(`${table}_bare_copy`)}`.execute(db);
  await sql`CHECKPOINT`.execute(db);
  return db.connection().execute(async (writer) => {
    const write = () => upsert(writer, table, rows as readonly RowInput<typeof table>[], new Date());
    const newSeconds = await timed(write);
    await flushStatistics(writer, db, marker);
    const before = await tuplesWritten(db, table);
    const replaySeconds = await timed(write);
    await flushStatistics(writer, db, marker + 1);
    const replayTuples = (await tuplesWritten(db, table)) - before;
    const copySeconds = await timed(() => copyRows(copyClient, `${table}_copy`, rows, new Date()));
    const bareCopySeconds = await timed(() => copyRows(copyClient, `${table}_bare_copy`, rows, new Date()));
    return { newSeconds, replaySeconds, replayTuples, copySeconds, bareCopySeconds };
  });
}

interface Measured {
  table: BenchTable;
  rates: { new: number; replay: number; copy: number; bareCopy: number };
  replayTuples: number;
}

async function measure(warehouse: Warehouse, copyClient: pg.Client, table: BenchTable, rows: readonly Row[], firstMarker: number): Promise<Measured> {
  await sql`CREATE UNLOGGED TABLE ${sql.table(`${table}_copy`)} (LIKE ${sql.table(table)} INCLUDING ALL)`.execute(warehouse.db);
  // Defaults come along (the bookkeeping columns COPY leaves out need them); indexes and constraints do not.
  await sql`CREATE UNLOGGED TABLE ${sql.table(`${table}_bare_copy`)} (LIKE ${sql.table(table)} INCLUDING DEFAULTS)`.execute(warehouse.db);
  const rounds: Round[] = [];
  for (let number = 0; number < ROUNDS; number += 1) rounds.push(await round(warehouse, copyClient, table, rows, firstMarker + 2 * number));
  const bestRate = (pick: (round: Round) => number) => Math.round(ROWS / Math.min(...rounds.map(pick)));
  return {
    table,
    rates: {
      new: bestRate((r) => r.newSeconds),
      replay: bestRate((r) => r.replaySeconds),
      copy: bestRate((r) => r.copySeconds),
      bareCopy: bestRate((r) => r.bareCopySeconds),
    },
    replayTuples: Math.max(...rounds.map((r) => r.replayTuples)),
  };
}

function printRates(results: readonly Measured[]): void {
  const cell = (value: number) => value.toLocaleString("en").padStart(12);
  console.log(`\nbench/upserts: ${ROWS.toLocaleString("en")} rows per table, rows/s, best of ${ROUNDS} rounds`);
  console.log(`  ${"table".padEnd(10)}${"upsert new".padStart(12)}${"replay".padStart(12)}${"COPY".padStart(12)}${"COPY no idx".padStart(12)}`);
  for (const { table, rates } of results) {
    console.log(`  ${table.padEnd(10)}${cell(rates.new)}${cell(rates.replay)}${cell(rates.copy)}${cell(rates.bareCopy)}`);
  }
  console.log("  (COPY: into an UNLOGGED copy with the same indexes; COPY no idx: an UNLOGGED copy without them, for scale)");
}

export async function runUpsertBench(): Promise<Target[]> {
  const serverUrl = process.env.DATABASE_URL;
  if (serverUrl === undefined || serverUrl === "") throw new Error("bench/upserts needs DATABASE_URL (a PostgreSQL server it may create a scratch database on)");
  const database = `coldsync_bench_upserts_${randomBytes(4).toString("hex")}`;
  const scratch = await createScratchDatabase(serverUrl, database);
  const url = scratch.url;
  try {
    const warehouse = await openWarehouse({ databaseUrl: url, dataDir: ".coldsync", schema: SCHEMA });
    const copyClient = new pg.Client({ connectionString: url, options: `-c search_path=${SCHEMA}` });
    await copyClient.connect();
    try {
      await migrateToLatest(warehouse);
      await sql`CREATE TABLE bench_flush_sentinel (marker integer)`.execute(warehouse.db);
      const results = [
        await measure(warehouse, copyClient, "schedules", scheduleRows(), 1),
        await measure(warehouse, copyClient, "leads", leadRows(), 1 + 2 * ROUNDS),
      ];
      printRates(results);
      const targets: Target[] = results.flatMap(({ table, rates, replayTuples }) => [
        { name: `${table}: new-row upsert / COPY`, value: rates.new / rates.copy, limit: 0.5, lowerIsBetter: false },
        { name: `${table}: tuples written by replay`, value: replayTuples, limit: 0, lowerIsBetter: true },
      ]);
      printResults(targets);
      return targets;
    } finally {
      await copyClient.end();
      await warehouse.destroy();
    }
  } finally {
    await scratch.drop();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const targets = await runUpsertBench();
  process.exitCode = targets.every((target) => target.pass) ? 0 : 1;
}
