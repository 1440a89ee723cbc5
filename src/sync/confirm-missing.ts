import { InvalidRecordError, UpstreamError, type Lookup, type RejectedRecord } from "../upstream/client.ts";
import { NATURAL_KEYS } from "../warehouse/tables.ts";
import type { SyncContext } from "./context.ts";
import { naturalKeyText } from "./natural-keys.ts";
import { answerForAnotherKey, askedTwiceOn404, rejectedAnswer } from "./run-lookup.ts";
import type { WalkCoverage } from "./soft-delete.ts";
import type { PagedStream, StreamScope } from "./stream.ts";
import { throwIfAborted } from "./stream-run.ts";

/**
 * Confirms, one lookup each, the rows a walk did not see before they are
 * soft-deleted (a stream's `confirmMissing`): rows a proven walk did not see,
 * or, for a listing without a total, rows two walks in a row did not see. The listing's order is not
 * guaranteed: a record that moves behind the cursor while one already read
 * goes leaves the total and every later position unchanged, so the walk
 * proves itself whole and would delete the one that moved. Nothing a walk by
 * offset sees tells that apart from a real deletion; a lookup does.
 *
 * Nearly always the walk saw every row: one query finds none and nothing is
 * asked. Otherwise, of the candidates at most the rule's `lookupsPerWalk` are
 * looked up (a random sample):
 * - a 404 confirms the row gone; an answer shows it present, and it is
 *   written with the walk's completion (its children then count as seen);
 * - an answer that cannot be placed shows it present too: its row stays live,
 *   and the answer is set aside with the walk's completion, as a lookup
 *   stream sets one aside (under the key asked for), so the run ends partial;
 * - when there were more candidates than were asked and every lookup was a
 *   404, the rest are taken as one bulk deletion and deleted with them; when
 *   any was present, the walk missed live records and is not trusted for the
 *   rest: only the confirmed ones go, the rest wait for a later walk;
 * - a lookup that fails (network, 5xx after retries) leaves its row, and the
 *   rest, live: the run reports UnconfirmedMissingError once the walk's pages
 *   and checkpoint are saved.
 * A row left live (undecided) keeps its children live too (WalkCoverage.settle).
 */

/**
 * Lookups per walk at most for a stream with many rows per walk (a campaign's leads): each is one request, and a
 * walk must stay bounded by its pages plus a little. Real deletions come one at a time (one lookup each); a bulk
 * one (a list taken off a campaign) is judged by a sample of this size, so it costs no more than this.
 */
export const CONFIRMATIONS_PER_WALK = 20;

export interface Confirmation<R> {
  /** Records the walk did not see that their lookups found: written with the walk's completion. */
  present: Lookup<R>[];
  /** Answers that could not be placed: set aside with the walk's completion; their rows are among the undecided. */
  rejected: RejectedRecord[];
  /** Rows neither confirmed gone nor found: left live for a later walk. */
  undecided: number;
  /** Lookups that failed: their rows are among the undecided. */
  failures: Error[];
}

export const NOTHING_TO_CONFIRM: Confirmation<never> = { present: [], rejected: [], undecided: 0, failures: [] };

/** Some rows a walk did not see could not be looked up: they stay live until a later walk confirms them. */
export class UnconfirmedMissingError extends Error {
  constructor(stream: string, confirmation: Confirmation<unknown>) {
    const [first] = confirmation.failures;
    super(
      `${confirmation.failures.length} lookup(s) of ${stream} records the walk did not see failed (${first?.message ?? "unknown error"}); ` +
        `${confirmation.undecided} record(s) stay live until a later walk confirms them`,
    );
    this.name = "UnconfirmedMissingError";
  }
}

/**
 * `onlyIf`: for a walk that cannot prove it is whole (WalkCoverage.markMissingAgain), the rows (`table:key`) the
 * previous such walk lacked too: only those are candidates; the others wait for the next walk.
 */
export async function confirmMissing<R>(
  ctx: SyncContext,
  stream: PagedStream<R>,
  coverage: WalkCoverage<R>,
  scope: StreamScope,
  readStartedAt: Date,
  onlyIf?: ReadonlySet<string>,
): Promise<Confirmation<R>> {
  const rule = stream.confirmMissing;
  if (rule === undefined) return NOTHING_TO_CONFIRM;
  const column = NATURAL_KEYS[rule.table][0] as string;
  const missing = await coverage.missing(ctx.db, scope, rule.table, readStartedAt);
  const candidates = missing.filter((row) => onlyIf?.has(`${rule.table}:${naturalKeyText(rule.table, row)}`) ?? true).map((row) => row[column] as string | number);
  if (candidates.length === 0) return NOTHING_TO_CONFIRM;
  const asked = sample(candidates, rule.lookupsPerWalk);
  const present: Lookup<R>[] = [];
  const rejected: RejectedRecord[] = [];
  const gone: (string | number)[] = [];
  const kept: (string | number)[] = [];
  const failures: Error[] = [];
  for (const key of asked) {
    throwIfAborted(ctx.signal);
    try {
      const lookup = await askedTwiceOn404(ctx.client, () => rule.fetch(ctx.client, key, ctx.signal), ctx.signal);
      const misplaced = answerForAnotherKey(stream, key, lookup.record);
      // An answer for another key tells nothing of this one: set aside, and its row stays, as for an unplaceable answer.
      if (misplaced === undefined) present.push(lookup);
      else {
        rejected.push(misplaced);
        kept.push(key);
      }
    } catch (error) {
      if (ctx.signal?.aborted) throw error;
      // An answer that cannot be placed still shows the record exists: its row stays, and the answer is set aside.
      if (error instanceof InvalidRecordError) {
        rejected.push(rejectedAnswer(stream, error, key));
        kept.push(key);
      } else if (error instanceof UpstreamError && error.status === 404) gone.push(key);
      else {
        failures.push(error instanceof Error ? error : new Error(String(error)));
        kept.push(key);
      }
    }
  }
  const askedKeys = new Set(asked);
  const rest = candidates.filter((key) => !askedKeys.has(key));
  if (gone.length === asked.length) gone.push(...rest);
  else kept.push(...rest);
  coverage.add(present.map((lookup) => lookup.record));
  coverage.settle(
    rule.table,
    gone.map((key) => ({ [column]: key })),
    kept,
  );
  const counts = { candidates: candidates.length, asked: asked.length, gone: gone.length, present: present.length, rejected: rejected.length, undecided: kept.length };
  if (kept.length > 0) ctx.logger.warn({ stream: stream.name, campaignUid: scope.campaignUid, ...counts }, "records the walk did not see stay live until a later walk confirms them");
  else ctx.logger.info({ stream: stream.name, campaignUid: scope.campaignUid, ...counts }, "records the walk did not see were looked up before their deletion");
  return { present, rejected, undecided: kept.length, failures };
}

/** `size` of `keys` at random: a record that answers its lookup but is never listed would otherwise take a place in every walk's sample. */
function sample<T>(keys: readonly T[], size: number): T[] {
  const pool = [...keys];
  const count = Math.min(size, pool.length);
  for (let index = 0; index < count; index += 1) {
    const pick = index + Math.floor(Math.random() * (pool.length - index));
    [pool[index], pool[pick]] = [pool[pick] as T, pool[index] as T];
  }
  return pool.slice(0, count);
}
