import { sql } from "kysely";
import { NATURAL_KEYS } from "../warehouse/tables.ts";
import { loadCheckpoint, saveCheckpoint } from "./checkpoints.ts";
import type { SyncContext } from "./context.ts";
import { naturalKeyText } from "./natural-keys.ts";
import { writePage } from "./page-writer.ts";
import { SoftDeleteKeys } from "./soft-delete.ts";
import type { ListStream, StreamScope } from "./stream.ts";
import { checkpointKey, type StreamOptions, type StreamResult } from "./stream-run.ts";

/** A listing that arrives whole (workspaces, replies): one transaction for the records, soft-deletes and checkpoint. */

export async function runList<R>(ctx: SyncContext, stream: ListStream<R>, scope: StreamScope, options: StreamOptions, result: StreamResult<R>): Promise<void> {
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

