import { createHash } from "node:crypto";
import { sql } from "kysely";
import { InvalidRecordError, UpstreamError, type Page } from "../upstream/client.ts";
import type { Kysely, Transaction } from "kysely";
import type { Database } from "../warehouse/database.ts";
import { NATURAL_KEYS } from "../warehouse/tables.ts";
import { markDeleted } from "../warehouse/upsert.ts";
import { loadCheckpoint, saveCheckpoint, type Checkpoint, type CheckpointKey, type CheckpointState } from "./checkpoints.ts";
import type { SyncContext } from "./context.ts";
import { naturalKeyText } from "./natural-keys.ts";
import { inTransaction, writePage } from "./page-writer.ts";
import type { ListStream, LookupStream, PagedStream, SoftDeleteRule, StreamDefinition, StreamScope } from "./stream.ts";
import { walk, type WalkStart } from "./walk.ts";

/**
 * The one engine that runs every stream, whatever its kind: it fetches,
 * writes each page with its checkpoint in one transaction, soft-deletes what
 * a complete scan no longer returns, and reports what it did.
 */

export interface StreamResult<R = unknown> {
  stream: string;
  campaignUid: string | null;
  fetched: number;
  written: number;
  rejected: number;
  requests: number;
  /** With `collect`: records this run had not seen before (listings past their anchor, lists' new records). */
  fresh: R[];
  /** With `collect`: the records a lookup stream fetched (a campaign's detail). */
  records: R[];
  durationMs: number;
  error?: Error;
}

export interface StreamOptions {
  runId: number;
  /** Merged into the checkpoint's state when the scan completes. */
  completedState?: CheckpointState;
  /** Ask the listing from the start even when the checkpoint would resume at the end. */
  fromStart?: boolean;
  /** Keep `fresh` and `records` in the result; off by default so that memory stays flat however large a listing grows. */
  collect?: boolean;
}

/** A walk that ends with fewer rows than the upstream's total starts over, this many walks at most. */
const MAX_PASSES = 4;

export class SyncAbortedError extends Error {
  constructor() {
    super("the sync was asked to stop");
    this.name = "SyncAbortedError";
  }
}

function checkpointKey(ctx: SyncContext, stream: StreamDefinition, scope: StreamScope): CheckpointKey {
  return { account: ctx.account, campaignUid: scope.campaignUid ?? "", stream: stream.name };
}

function fingerprint(keys: readonly string[]): string | null {
  return keys.length === 0 ? null : createHash("sha256").update(keys.join("\n")).digest("hex").slice(0, 32);
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new SyncAbortedError();
}

export async function runStream<R>(ctx: SyncContext, stream: StreamDefinition<R>, scope: StreamScope, options: StreamOptions): Promise<StreamResult<R>> {
  const startedAt = Date.now();
  const requestsBefore = ctx.client.stats.requests;
  const result: StreamResult<R> = {
    stream: stream.name,
    campaignUid: scope.campaignUid,
    fetched: 0,
    written: 0,
    rejected: 0,
    requests: 0,
    fresh: [],
    records: [],
    durationMs: 0,
  };
  try {
    if (stream.kind === "paged") await runPaged(ctx, stream, scope, options, result);
    else if (stream.kind === "list") await runList(ctx, stream, scope, options, result);
    else await runLookup(ctx, stream, scope, options, result);
  } catch (error) {
    if (error instanceof SyncAbortedError) throw error;
    // A request cut short by the caller's signal is the stop it asked for, not a failing stream.
    if (ctx.signal?.aborted) throw new SyncAbortedError();
    result.error = error instanceof Error ? error : new Error(String(error));
    ctx.logger.warn({ stream: stream.name, campaignUid: scope.campaignUid, err: result.error }, "stream failed");
  } finally {
    result.requests = ctx.client.stats.requests - requestsBefore;
    result.durationMs = Date.now() - startedAt;
    ctx.observer?.onStreamFinished?.({
      campaignUid: scope.campaignUid,
      stream: stream.name,
      durationMs: result.durationMs,
      ok: result.error === undefined,
    });
  }
  return result;
}

/** Where a paged walk starts: an interrupted walk resumes, an append stream continues at its end. */
function walkStart(stream: PagedStream<unknown>, checkpoint: Checkpoint, options: StreamOptions): WalkStart {
  const tail = checkpoint.state.tail ?? [];
  const interrupted = checkpoint.scanStartedAt !== null && checkpoint.cursorOffset > 0;
  const continuing = stream.checkpoint === "append" && checkpoint.lastCompleteScanAt !== null && !options.fromStart;
  return interrupted || continuing ? { offset: checkpoint.cursorOffset, tail } : { offset: 0, tail: [] };
}

async function runPaged<R>(ctx: SyncContext, stream: PagedStream<R>, scope: StreamScope, options: StreamOptions, result: StreamResult<R>): Promise<void> {
  const key = checkpointKey(ctx, stream, scope);
  const checkpoint = await loadCheckpoint(ctx.db, key);
  let start = walkStart(stream as PagedStream<unknown>, checkpoint, options);
  const scanStartedAt = checkpoint.scanStartedAt ?? new Date();
  for (let pass = 1; ; pass += 1) {
    const vouched = new SoftDeleteKeys(stream);
    let restarts = 0;
    const pages = walk({
      fetch: (offset, signal) =>
        ctx.client.page(stream.resource, { campaignUid: scope.campaignUid ?? undefined, offset }, signal) as Promise<Page<R>>,
      key: stream.key,
      start,
      signal: ctx.signal,
    });
    let step = await pages.next();
    let lastOffset = start.offset;
    let lastTail: string[] = [...start.tail];
    while (!step.done) {
      const walked = step.value;
      if (walked.restarts !== restarts) {
        restarts = walked.restarts;
        vouched.clear();
      }
      const page = walked.page;
      const counts = await writePage(
        ctx.db,
        { stream, scope, records: page.records, rejected: page.rejected, runId: options.runId, syncedAt: new Date() },
        (trx) =>
          saveCheckpoint(
            trx,
            key,
            {
              cursorOffset: walked.nextOffset,
              upstreamTotal: page.total,
              fingerprint: fingerprint(walked.tail),
              scanStartedAt,
              lastCompleteScanAt: checkpoint.lastCompleteScanAt,
              state: { ...checkpoint.state, tail: walked.tail },
            },
            options.runId,
          ),
        ctx.observer,
      );
      result.fetched += page.records.length + page.rejected.length;
      result.written += counts.written;
      result.rejected += counts.rejected;
      if (options.collect) result.fresh.push(...walked.fresh);
      vouched.add(page.records);
      lastOffset = walked.nextOffset;
      lastTail = walked.tail;
      throwIfAborted(ctx.signal);
      step = await pages.next();
    }
    const walkResult = step.value;
    if (!(await looksComplete(ctx, stream, scope, walkResult.total))) {
      if (pass >= MAX_PASSES) throw new Error(`after ${pass} walks the warehouse still has fewer ${stream.name} than the upstream total ${walkResult.total}`);
      ctx.logger.info({ stream: stream.name, campaignUid: scope.campaignUid, pass }, "fewer rows than the upstream total; walking again from the start");
      start = { offset: 0, tail: [] };
      continue;
    }
    await inTransaction(ctx.db, async (trx) => {
      const completedAt = new Date();
      if (walkResult.fromStart) await vouched.markMissing(trx, scope, completedAt);
      const appendAtEnd = stream.checkpoint === "append";
      await saveCheckpoint(
        trx,
        key,
        {
          cursorOffset: appendAtEnd ? lastOffset : 0,
          upstreamTotal: walkResult.total,
          fingerprint: appendAtEnd ? fingerprint(lastTail) : null,
          scanStartedAt: null,
          lastCompleteScanAt: completedAt,
          state: { ...checkpoint.state, ...options.completedState, tail: appendAtEnd ? lastTail : [] },
        },
        options.runId,
      );
      ctx.observer?.onCheckpoint?.({ campaignUid: scope.campaignUid, stream: stream.name, completedAt });
    });
    return;
  }
}

/**
 * After a walk, the warehouse's live rows plus the stream's rejected records
 * must number at least the upstream's total; fewer means records slipped past
 * the cursor while the listing moved.
 */
async function looksComplete(ctx: SyncContext, stream: PagedStream<unknown>, scope: StreamScope, total: number): Promise<boolean> {
  if (!stream.completeness) return true;
  const filters = stream.completeness.within(scope);
  let live = ctx.db
    .selectFrom(stream.completeness.table)
    .select(sql<string>`count(*)`.as("count"))
    .where(sql.ref("_deleted_at"), "is", null);
  for (const [column, value] of Object.entries(filters)) live = live.where(sql.ref(column), "=", value);
  const rejected = ctx.db
    .selectFrom("rejected_records")
    .select(sql<string>`count(*)`.as("count"))
    .where("account", "=", scope.account)
    .where("stream", "=", stream.name)
    .where("campaign_uid", scope.campaignUid === null ? "is" : "=", scope.campaignUid);
  const [liveRow, rejectedRow] = await Promise.all([live.executeTakeFirst(), rejected.executeTakeFirst()]);
  return Number(liveRow?.count ?? 0) + Number(rejectedRow?.count ?? 0) >= total;
}

async function runList<R>(ctx: SyncContext, stream: ListStream<R>, scope: StreamScope, options: StreamOptions, result: StreamResult<R>): Promise<void> {
  const key = checkpointKey(ctx, stream, scope);
  const checkpoint = await loadCheckpoint(ctx.db, key);
  const parsed = await stream.fetch(ctx.client, scope, ctx.signal);
  const known = options.collect && checkpoint.lastCompleteScanAt !== null ? await knownKeys(ctx, stream as ListStream<unknown>, scope) : new Set<string>();
  const firstRule = stream.softDelete?.[0];
  const vouched = new SoftDeleteKeys(stream);
  vouched.add(parsed.records);
  const counts = await writePage(
    ctx.db,
    { stream, scope, records: parsed.records, rejected: parsed.rejected, runId: options.runId, syncedAt: new Date() },
    async (trx) => {
      const completedAt = new Date();
      await vouched.markMissing(trx, scope, completedAt);
      await saveCheckpoint(
        trx,
        key,
        {
          cursorOffset: 0,
          upstreamTotal: parsed.records.length + parsed.rejected.length,
          fingerprint: null,
          scanStartedAt: null,
          lastCompleteScanAt: completedAt,
          state: { ...checkpoint.state, ...options.completedState },
        },
        options.runId,
      );
    },
    ctx.observer,
  );
  result.fetched = parsed.records.length + parsed.rejected.length;
  result.written = counts.written;
  result.rejected = counts.rejected;
  if (!options.collect) return;
  result.fresh = firstRule
    ? parsed.records.filter((record) => firstRule.keys(record).some((key) => !known.has(naturalKeyText(firstRule.table, key))))
    : parsed.records;
}

/** Natural keys of the stream's rows already in the warehouse, to tell new records from known ones. */
async function knownKeys(ctx: SyncContext, stream: ListStream<unknown>, scope: StreamScope): Promise<Set<string>> {
  const rule = stream.softDelete?.[0];
  if (!rule) return new Set();
  const columns = NATURAL_KEYS[rule.table];
  let query = ctx.db.selectFrom(rule.table).select(columns.map((column) => sql.ref(column).as(column)));
  for (const [column, value] of Object.entries(rule.within(scope))) query = query.where(sql.ref(column), "=", value);
  const rows = (await query.execute()) as Record<string, unknown>[];
  return new Set(rows.map((row) => naturalKeyText(rule.table, row)));
}

async function runLookup<R>(ctx: SyncContext, stream: LookupStream<R>, scope: StreamScope, options: StreamOptions, result: StreamResult<R>): Promise<void> {
  const key = checkpointKey(ctx, stream, scope);
  const checkpoint = await loadCheckpoint(ctx.db, key);
  const ids = await stream.ids(ctx.db, scope, checkpoint.lastCompleteScanAt);
  for (const id of ids) {
    throwIfAborted(ctx.signal);
    let record: R;
    try {
      record = await stream.fetch(ctx.client, id, ctx.signal);
    } catch (error) {
      result.fetched += 1;
      if (error instanceof InvalidRecordError) {
        const counts = await writePage(ctx.db, { stream, scope, records: [], rejected: [error.rejected], runId: options.runId, syncedAt: new Date() }, async () => undefined);
        result.rejected += counts.rejected;
        continue;
      }
      if (error instanceof UpstreamError && error.status === 404) {
        await markDeleted(ctx.db, stream.missing.table, { [stream.missing.column]: id } as never, [], new Date());
        continue;
      }
      throw error;
    }
    result.fetched += 1;
    if (options.collect) result.records.push(record);
    const vouched = new SoftDeleteKeys(stream);
    vouched.add([record]);
    const counts = await writePage(
      ctx.db,
      { stream, scope, records: [record], rejected: [], runId: options.runId, syncedAt: new Date() },
      (trx) => vouched.markMissing(trx, scope, new Date()),
      ctx.observer,
    );
    result.written += counts.written;
  }
  if (options.collect) result.fresh = result.records;
  await saveCheckpoint(
    ctx.db,
    key,
    {
      ...checkpoint,
      cursorOffset: 0,
      upstreamTotal: ids.length,
      scanStartedAt: null,
      lastCompleteScanAt: new Date(),
      state: { ...checkpoint.state, ...options.completedState },
    },
    options.runId,
  );
}

/** The natural keys a complete scan vouched for, per soft-delete rule of the stream. */
class SoftDeleteKeys<R> {
  readonly #rules: SoftDeleteRule<R>[];
  readonly #keys: Map<string, Record<string, unknown>>[];

  constructor(stream: StreamDefinition<R>) {
    this.#rules = stream.softDelete ?? [];
    this.#keys = this.#rules.map(() => new Map());
  }

  add(records: readonly R[]): void {
    this.#rules.forEach((rule, index) => {
      const keys = this.#keys[index] as Map<string, Record<string, unknown>>;
      for (const record of records) for (const key of rule.keys(record)) keys.set(naturalKeyText(rule.table, key), key);
    });
  }

  clear(): void {
    for (const keys of this.#keys) keys.clear();
  }

  async markMissing(db: Kysely<Database> | Transaction<Database>, scope: StreamScope, at: Date): Promise<void> {
    for (const [index, rule] of this.#rules.entries()) {
      const keys = [...(this.#keys[index] as Map<string, Record<string, unknown>>).values()];
      // Rules are data typed per stream; the warehouse checks table, scope and key columns at run time.
      await markDeleted(db, rule.table, rule.within(scope) as never, keys as never[], at);
    }
  }
}
