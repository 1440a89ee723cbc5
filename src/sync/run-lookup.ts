import type { Transaction } from "kysely";
import { addStage, stageStart } from "../stage-timings.ts";
import { InvalidRecordError, UpstreamError, type ReadRecord, type RejectedRecord, type UpstreamClient } from "../upstream/client.ts";
import type { Database } from "../warehouse/database.ts";
import { markDeleted } from "../warehouse/upsert.ts";
import { loadCheckpoint, previousScan, saveCheckpoint } from "./checkpoints.ts";
import type { SyncContext } from "./context.ts";
import { inTransaction, writePage } from "./page-writer.ts";
import { cascadeDeletes, resolveRejectedBefore, WalkCoverage } from "./soft-delete.ts";
import { sourceOf, type LookupStream, type StreamDefinition, type StreamScope } from "./stream.ts";
import { addCounts, checkpointKey, throwIfAborted, type StreamOptions, type StreamResult } from "./stream-run.ts";

/**
 * Records fetched one by one (a campaign's detail, email sequences, leads to
 * refresh): a 404 soft-deletes the record (and what hangs from it), an answer
 * that cannot be placed is rejected under the identifier that was asked for.
 */

const REQUESTED = "requested=";

/** The key a lookup's answer is set aside under when it cannot be placed: the identifier asked for, which it failed to hold. */
function requestedKey(id: string | number): string {
  return `${REQUESTED}${id}`;
}

/**
 * A lookup's answer that cannot be placed, as it is set aside: under the name the stream's rejected records are
 * kept (and resolved) under, and the identifier asked for, which tells it apart alone.
 */
export function rejectedAnswer<R>(stream: StreamDefinition<R>, error: InvalidRecordError, id: string | number): RejectedRecord {
  return { ...error.rejected, stream: sourceOf(stream), recordKey: requestedKey(id), keyIdentifies: true };
}

/**
 * A lookup's answer that holds another key than the one asked for (another record, or another spelling of the
 * key), set aside under the identifier asked for; undefined for an answer of the record asked for. Written under
 * its own key, it would make a row no listing names, and tell nothing of the one asked for.
 */
export function answerForAnotherKey<R>(stream: StreamDefinition<R> & { key: (record: R) => string }, id: string | number, record: ReadRecord<R>): RejectedRecord | undefined {
  const answered = stream.key(record.value);
  if (answered === String(id)) return undefined;
  const reason = `answered with the key ${JSON.stringify(answered)} for a lookup of ${JSON.stringify(String(id))}; not placed`;
  return { stream: sourceOf(stream), reason, payload: record.raw, recordKey: requestedKey(id), keyIdentifies: true };
}

export async function runLookup<R>(ctx: SyncContext, stream: LookupStream<R>, scope: StreamScope, options: StreamOptions<R>, result: StreamResult<R>): Promise<void> {
  const key = checkpointKey(ctx, stream, scope);
  const checkpoint = await loadCheckpoint(ctx.db, key);
  const idsReadAt = new Date();
  const ids = await stream.ids(ctx.db, scope);
  for (const id of ids) {
    throwIfAborted(ctx.signal);
    const requested = requestedKey(id);
    const readStartedAt = new Date();
    let lookup;
    try {
      const waitStart = stageStart();
      lookup = await askedTwiceOn404(ctx.client, () => stream.fetch(ctx.client, id, ctx.signal), ctx.signal);
      addStage("fetchWait", waitStart);
    } catch (error) {
      if (error instanceof InvalidRecordError) {
        // An answer, though it cannot be placed: a record was fetched (a run that fetched nothing failed).
        result.fetched += 1;
        const rejected = rejectedAnswer(stream, error, id);
        addCounts(result, await writePage(ctx, { stream, scope, records: [], rejected: [rejected], runId: options.runId, observedAt: readStartedAt }, async () => undefined));
        continue;
      }
      if (error instanceof UpstreamError && error.status === 404) {
        await gone(ctx, stream, scope, id, readStartedAt);
        continue;
      }
      throw error;
    }
    result.fetched += 1;
    const misplaced = answerForAnotherKey(stream, id, lookup.record);
    if (misplaced !== undefined) {
      addCounts(result, await writePage(ctx, { stream, scope, records: [], rejected: [misplaced], runId: options.runId, observedAt: readStartedAt }, async () => undefined));
      continue;
    }
    const coverage = new WalkCoverage(stream);
    coverage.add([lookup.record]);
    const counts = await writePage(ctx, { stream, scope, records: [lookup.record], rejected: [], runId: options.runId, observedAt: lookup.observedAt }, async (trx) => {
      // What the record no longer lists (a campaign's sending domain) went by the time it was observed: dated so,
      // the campaign's history can tell it from what a later deletion of the campaign took (migrations/0011).
      await coverage.markMissing(trx, scope, lookup.observedAt);
      await resolveReadClean(trx, stream, scope, requested, stream.key(lookup.record.value), readStartedAt);
    });
    addCounts(result, counts);
    // A superseded answer is older than what the warehouse holds: the caller reads the warehouse instead (a campaign's status).
    if (options.collect && counts.superseded !== true) result.records.push(lookup.record.value);
  }
  if (stream.idsNameAll) await resolveNoLongerAsked(ctx, stream, scope, ids, idsReadAt);
  await saveCheckpoint(
    ctx.db,
    key,
    {
      ...checkpoint,
      cursorOffset: 0,
      upstreamTotal: ids.length,
      scanStartedAt: null,
      lastCompleteScanAt: new Date(),
      state: { ...checkpoint.state, ...options.completedState, ...previousScan(checkpoint) },
    },
    options.runId,
  );
}

/** A 404 that cannot stand for a deletion: the upstream answered nothing but errors, its workspace listing included. */
export class UnconfirmedNotFoundError extends Error {
  constructor(notFound: UpstreamError, probe: unknown) {
    const why = probe instanceof Error ? probe.message : String(probe);
    super(`${notFound.message}; the workspace listing failed too (${why}): a 404 proves no deletion while the upstream answers nothing (is COLDSYNC_API_URL right?)`);
    this.name = "UnconfirmedNotFoundError";
  }
}

/**
 * Asks a 404 once more before it stands, wherever a 404 deletes a record (a lookup, a confirmation of what a walk
 * did not see): deleting a record takes everything that hangs from it (a campaign's leads and events), and a real
 * upstream answers a stray 404 now and then (a replica behind, a deploy). The second 404 throws, as the first would,
 * once the upstream showed it answers at all: a run that received no success yet asks for the workspace listing
 * first. A wrong COLDSYNC_API_URL, or a front that answers 404 to everything, would otherwise delete every campaign
 * a job asked for. Without an answer it throws UnconfirmedNotFoundError, which deletes nothing.
 */
export async function askedTwiceOn404<T>(client: UpstreamClient, fetch: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  try {
    return await fetch();
  } catch (error) {
    if (!(error instanceof UpstreamError && error.status === 404)) throw error;
  }
  try {
    return await fetch();
  } catch (error) {
    if (!(error instanceof UpstreamError && error.status === 404) || client.stats.answered > 0) throw error;
    await client.listWorkspaces(signal).catch((probe: unknown) => {
      throw new UnconfirmedNotFoundError(error, probe);
    });
    throw error;
  }
}

/**
 * The record was read and placed: its rejected answer, and the parts of it a read set aside (a lead's contact
 * without an id) that this read no longer met, are resolved.
 */
async function resolveReadClean<R>(trx: Transaction<Database>, stream: LookupStream<R>, scope: StreamScope, requested: string, key: string, readStartedAt: Date): Promise<void> {
  await resolveRejectedBefore(trx, scope, sourceOf(stream), readStartedAt, new Date(), (eb) => eb.or([eb("record_key", "=", requested), eb("parent_key", "=", key)]));
}

/** The stream's answers set aside for ids it no longer asks for (stream.idsNameAll) will never be met again: resolved. */
async function resolveNoLongerAsked<R>(ctx: SyncContext, stream: LookupStream<R>, scope: StreamScope, ids: readonly (string | number)[], idsReadAt: Date): Promise<void> {
  const asked = ids.map(requestedKey);
  await resolveRejectedBefore(ctx.db, scope, sourceOf(stream), idsReadAt, new Date(), (eb) =>
    eb.and([eb("record_key", "like", `${REQUESTED}%`), ...(asked.length === 0 ? [] : [eb("record_key", "not in", asked)])]),
  );
}

/**
 * The upstream no longer knows the record: soft-delete it, and what hangs from it, and resolve what was set aside
 * of it before, its answer and its parts (a lookup's record is keyed by the one id asked for, so that id names them).
 */
async function gone<R>(ctx: SyncContext, stream: LookupStream<R>, scope: StreamScope, id: string | number, readStartedAt: Date): Promise<void> {
  const at = new Date();
  const filter = { [stream.missing.column]: id };
  await inTransaction(ctx.db, async (trx) => {
    await resolveRejectedBefore(trx, scope, sourceOf(stream), readStartedAt, at, (eb) => eb.or([eb("record_key", "=", requestedKey(id)), eb("parent_key", "=", String(id))]));
    // A read of the record made since the lookup started (a walk's page) is newer than this 404: the record stays.
    await markDeleted(trx, stream.missing.table, filter as never, [], at, undefined, readStartedAt);
    for (const cascade of stream.cascade ?? []) {
      // From the record's own table a cascade takes what hangs from that record; further down, what hangs from the rows this deletion took.
      await cascadeDeletes(trx, cascade, cascade.from === stream.missing.table ? filter : { _deleted_at: at }, at, readStartedAt);
    }
  });
}
