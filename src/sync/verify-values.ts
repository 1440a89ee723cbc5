import { InvalidRecordError, UpstreamError, type ReadRecord } from "../upstream/client.ts";
import { differingRows } from "../warehouse/differing-rows.ts";
import type { RowInput, SyncedTableName } from "../warehouse/tables.ts";
import type { SyncContext } from "./context.ts";
import { keyList } from "./key-list.ts";
import { keyRows, naturalKeyText } from "./natural-keys.ts";
import { mapPage } from "./page-writer.ts";
import type { LookupStream, StreamDefinition, StreamScope } from "./stream.ts";
import { CAMPAIGN_STREAMS, campaignDetail } from "./streams/index.ts";
import type { VerifyLine } from "./verify.ts";

/**
 * `verify --values`: the records verify reads anyway are mapped to rows as the
 * sync maps them, and compared with the rows the warehouse holds
 * (src/warehouse/differing-rows.ts), page by page as they are read, so memory
 * holds the keys of the rows that differ or are missing, never a campaign's
 * records.
 *
 * A row the records map to that the warehouse does not hold live (held
 * soft-deleted, or not at all) is missing, on every table: contacts, email
 * sequences and a campaign's sending domains have no key-set line of their
 * own to name it. Except where the sync rightly holds such a row deleted:
 * copies whose existence another stream decides (`stream.copiesInto`: a
 * schedule's replies and clicks, which the listings #13 and #14 decide, and
 * the sequence its `email_data` names, which #9 decides). A copy never brings
 * back a row its decider deleted, so a copy that is not held live says
 * nothing, only the values of those held are compared; unless the decider is
 * a lookup (decidingLookup): then the row is asked for, and is missing
 * only if the lookup finds it.
 *
 * A difference, like a missing row, is a mismatch like a count's: the
 * warehouse does not hold what the upstream shows now, whether a sync wrote
 * it wrong or the upstream changed it since the last sync.
 */

/**
 * The campaign stream that looks the rows of a table of copies up one by one and soft-deletes them on a 404, if
 * any: a schedule's `email_data` can name a sequence #9 (email_sequences) no longer knows.
 */
function decidingLookup(table: SyncedTableName): LookupStream<unknown> | undefined {
  return CAMPAIGN_STREAMS.find((stream): stream is LookupStream<unknown> => stream.kind === "lookup" && stream.missing.table === table);
}

/** What a lookup answered for a key (true: found) in one scope's verification: asked once, however often the key is met. */
type LookupAnswers = Map<string, boolean>;

interface TableTally {
  /** Rows read, held live or not; a row met on several pages (the email sequence its schedules carry) counts once per page. */
  read: number;
  /** Those of them held live, and so compared. */
  compared: number;
  /** The rows that differed, and in which columns. */
  differing: Map<string, Set<string>>;
  /** The rows the warehouse does not hold live. */
  missing: Set<string>;
  /** Live rows a whole read does not list (compareWhole). */
  extra: Set<string>;
}

/** One read of one stream in one scope: its rows compared, per table. */
export class StreamValues<R> {
  readonly #tables = new Map<SyncedTableName, TableTally>();

  constructor(
    private readonly ctx: SyncContext,
    private readonly stream: StreamDefinition<R>,
    private readonly scope: StreamScope,
    private readonly answers: LookupAnswers,
  ) {}

  async compare(records: readonly ReadRecord<R>[]): Promise<void> {
    if (records.length === 0) return;
    // Parts of records that cannot be placed are left out by the mapping: they have no row to compare.
    const { batch } = mapPage(this.stream, records, this.scope, new Date());
    for (const table of Object.keys(batch) as SyncedTableName[]) {
      const comparison = await differingRows(this.ctx.db, table, batch[table] as RowInput<typeof table>[]);
      const missing = await this.#missing(table, comparison.missing);
      const tally = this.#tally(table);
      tally.read += comparison.compared + missing.length;
      tally.compared += comparison.compared;
      for (const row of comparison.differing) {
        const key = naturalKeyText(table, row.key);
        const columns = tally.differing.get(key) ?? new Set();
        for (const column of row.columns) columns.add(column);
        tally.differing.set(key, columns);
      }
      for (const key of missing) tally.missing.add(key);
    }
  }

  /**
   * Records that are all the upstream holds in the scope of the stream's soft-delete rules (a campaign's detail,
   * and its sending domains): compared, and the live rows of those rules they do not list are extra.
   */
  async compareWhole(records: readonly ReadRecord<R>[]): Promise<void> {
    await this.compare(records);
    for (const rule of this.stream.softDelete ?? []) {
      const listed = records.map((record) => rule.keys(record.value));
      // A record whose list could not be read vouches for nothing, and the sync deletes nothing for it.
      if (listed.some((keys) => keys === null)) continue;
      const keys = new Set(listed.flatMap((list) => (list ?? []).map((key) => naturalKeyText(rule.table, key))));
      const held = await keyRows(this.ctx.db, rule.table, rule.within(this.scope), "live");
      const tally = this.#tally(rule.table);
      for (const row of held) if (!keys.has(row.text)) tally.extra.add(row.text);
    }
  }

  #tally(table: SyncedTableName): TableTally {
    let tally = this.#tables.get(table);
    if (tally === undefined) this.#tables.set(table, (tally = { read: 0, compared: 0, differing: new Map(), missing: new Set(), extra: new Set() }));
    return tally;
  }

  /** The keys, as text, of the rows not held live that the warehouse should hold (see the rules above). */
  async #missing(table: SyncedTableName, keys: readonly Record<string, string>[]): Promise<string[]> {
    if (keys.length === 0) return [];
    const texts = keys.map((key) => naturalKeyText(table, key));
    if (!this.stream.copiesInto?.includes(table)) return texts;
    const lookup = decidingLookup(table);
    if (lookup === undefined) return [];
    const found: string[] = [];
    for (const [index, key] of keys.entries()) {
      const text = texts[index] as string;
      const asked = `${table}|${text}`;
      let answer = this.answers.get(asked);
      if (answer === undefined) this.answers.set(asked, (answer = await this.#found(lookup, key[lookup.missing.column] as string)));
      if (answer) found.push(text);
    }
    return found;
  }

  /** Whether the lookup knows the record: a 404 is what the sync deletes the row for; a record it cannot place still exists. */
  async #found(lookup: LookupStream<unknown>, id: string): Promise<boolean> {
    try {
      await lookup.fetch(this.ctx.client, id, this.ctx.signal);
      return true;
    } catch (error) {
      if (error instanceof UpstreamError && error.status === 404) return false;
      if (error instanceof InvalidRecordError) return true;
      throw error;
    }
  }

  /** One line per table that had rows read. */
  lines(): VerifyLine[] {
    return [...this.#tables].flatMap(([table, tally]) => (tally.read === 0 && tally.extra.size === 0 ? [] : [this.#line(table, tally)]));
  }

  #line(table: SyncedTableName, tally: TableTally): VerifyLine {
    const columns = new Map<string, number>();
    for (const differing of tally.differing.values()) for (const column of differing) columns.set(column, (columns.get(column) ?? 0) + 1);
    return {
      campaignUid: this.scope.campaignUid,
      stream: this.stream.name,
      table,
      status: tally.missing.size > 0 ? "missing" : tally.extra.size > 0 ? "extra" : tally.differing.size > 0 ? "differs" : "ok",
      upstream: tally.read,
      warehouse: tally.compared,
      rejected: 0,
      missingKeys: keyList(tally.missing),
      extraKeys: keyList(tally.extra),
      differingKeys: keyList(tally.differing.keys()),
      // Most often differing first.
      columns: Object.fromEntries([...columns].sort(([a, left], [b, right]) => right - left || (a < b ? -1 : 1))),
    };
  }
}

/** The value comparisons of one scope (the account, or a campaign), in the order their streams were first read. */
export class ScopeValues {
  readonly #reads = new Map<string, StreamValues<unknown>>();
  readonly #answers: LookupAnswers = new Map();

  /** `ctx`'s client asks the lookups (its requests are the verification's). */
  constructor(
    private readonly ctx: SyncContext,
    private readonly scope: StreamScope,
  ) {}

  /**
   * A new read of `stream`. It replaces an earlier read's comparisons (a walk that started over, a listing read
   * again to compare its keys), so each row is reported as the last read found it.
   */
  begin<R>(stream: StreamDefinition<R>): StreamValues<R> {
    const read = new StreamValues(this.ctx, stream, this.scope, this.#answers);
    this.#reads.set(stream.name, read as StreamValues<unknown>);
    return read;
  }

  lines(): VerifyLine[] {
    return [...this.#reads.values()].flatMap((read) => read.lines());
  }
}

/**
 * The campaign's detail (#2) against its row. A campaign the upstream no longer knows (404) has nothing to
 * compare, and neither has a detail that cannot be placed: the key sets and the rejected lines report those.
 */
export async function compareCampaignDetail(ctx: SyncContext, values: ScopeValues, campaignUid: string): Promise<void> {
  const lookup = await campaignDetail.fetch(ctx.client, campaignUid, ctx.signal).catch((error: unknown) => {
    if (error instanceof InvalidRecordError || (error instanceof UpstreamError && error.status === 404)) return undefined;
    throw error;
  });
  if (lookup !== undefined) await values.begin(campaignDetail).compareWhole([lookup.record]);
}
