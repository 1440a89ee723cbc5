import type { Kysely } from "kysely";
import { InvalidRecordError, UpstreamError, type ReadRecord } from "../upstream/client.ts";
import type { Database } from "../warehouse/database.ts";
import { differingRows } from "../warehouse/differing-rows.ts";
import type { RowInput, SyncedTableName } from "../warehouse/tables.ts";
import type { SyncContext } from "./context.ts";
import { keyList } from "./key-list.ts";
import { naturalKeyText } from "./natural-keys.ts";
import { mapPage } from "./page-writer.ts";
import type { StreamDefinition, StreamScope } from "./stream.ts";
import { campaignDetail } from "./streams/index.ts";
import type { VerifyLine } from "./verify.ts";

/**
 * `verify --values`: the records verify reads anyway are mapped to rows as the
 * sync maps them, and compared with the rows the warehouse holds
 * (src/warehouse/differing-rows.ts), page by page as they are read, so memory
 * holds the keys of the rows that differ, never a campaign's records.
 *
 * A difference is a mismatch like a count's: the warehouse does not hold what
 * the upstream shows now, whether a sync wrote it wrong or the upstream
 * changed it since the last sync.
 */

interface TableTally {
  /** Rows compared; a row met on several pages (the email sequence its schedules carry) counts once per page. */
  compared: number;
  /** The rows that differed, and in which columns. */
  differing: Map<string, Set<string>>;
}

/** One read of one stream in one scope: its rows compared, per table. */
export class StreamValues<R> {
  readonly #tables = new Map<SyncedTableName, TableTally>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly stream: StreamDefinition<R>,
    private readonly scope: StreamScope,
  ) {}

  async compare(records: readonly ReadRecord<R>[]): Promise<void> {
    if (records.length === 0) return;
    // Parts of records that cannot be placed are left out by the mapping: they have no row to compare.
    const { batch } = mapPage(this.stream, records, this.scope, new Date());
    for (const table of Object.keys(batch) as SyncedTableName[]) {
      const { compared, differing } = await differingRows(this.db, table, batch[table] as RowInput<typeof table>[]);
      let tally = this.#tables.get(table);
      if (tally === undefined) this.#tables.set(table, (tally = { compared: 0, differing: new Map() }));
      tally.compared += compared;
      for (const row of differing) {
        const key = naturalKeyText(table, row.key);
        const columns = tally.differing.get(key) ?? new Set();
        for (const column of row.columns) columns.add(column);
        tally.differing.set(key, columns);
      }
    }
  }

  /** One line per table that had rows to compare. */
  lines(): VerifyLine[] {
    return [...this.#tables].flatMap(([table, tally]) => (tally.compared === 0 ? [] : [this.#line(table, tally)]));
  }

  #line(table: SyncedTableName, tally: TableTally): VerifyLine {
    const columns = new Map<string, number>();
    for (const differing of tally.differing.values()) for (const column of differing) columns.set(column, (columns.get(column) ?? 0) + 1);
    return {
      campaignUid: this.scope.campaignUid,
      stream: this.stream.name,
      table,
      status: tally.differing.size > 0 ? "differs" : "ok",
      upstream: tally.compared,
      warehouse: tally.compared,
      rejected: 0,
      differingKeys: keyList(tally.differing.keys()),
      // Most often differing first.
      columns: Object.fromEntries([...columns].sort(([a, left], [b, right]) => right - left || (a < b ? -1 : 1))),
    };
  }
}

/** The value comparisons of one scope (the account, or a campaign), in the order their streams were first read. */
export class ScopeValues {
  readonly #reads = new Map<string, StreamValues<unknown>>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly scope: StreamScope,
  ) {}

  /**
   * A new read of `stream`. It replaces an earlier read's comparisons (a walk that started over, a listing read
   * again to compare its keys), so each row is reported as the last read found it.
   */
  begin<R>(stream: StreamDefinition<R>): StreamValues<R> {
    const read = new StreamValues(this.db, stream, this.scope);
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
  if (lookup !== undefined) await values.begin(campaignDetail).compare([lookup.record]);
}
