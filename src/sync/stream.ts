import type { Kysely } from "kysely";
import type { Listing, Lookup, PagedResource, ReadRecord, RejectedRecord, UpstreamClient } from "../upstream/client.ts";
import type { Executor } from "../warehouse/column-arrays.ts";
import type { Database } from "../warehouse/database.ts";
import type { RowInput, SyncedTableName } from "../warehouse/tables.ts";

/**
 * A stream is data: where its records come from, how each is keyed, which
 * warehouse rows it becomes, and how its position is checkpointed. One engine
 * (engine.ts) runs every stream; adding a stream means adding one file under
 * streams/ and listing it in streams/index.ts.
 */

export type StreamName =
  | "workspaces"
  | "domains"
  | "contact_lists"
  | "campaigns"
  | "campaign_detail"
  | "email_sequences"
  | "leads"
  | "lead_refresh"
  | "replies"
  | "link_clicks"
  | "email_opens";

/** What a stream is running for: the account's name, and the campaign for campaign streams. */
export interface StreamScope {
  account: string;
  campaignUid: string | null;
}

/** Warehouse rows produced from records, grouped by table. */
export type RowBatch = { [T in SyncedTableName]?: RowInput<T>[] };

/** A part of a record that cannot be placed (a schedule without an id inside a lead); the engine adds the stream and the record's key. */
export type RejectedPart = Omit<RejectedRecord, "stream" | "parentKey">;

/** What a row mapping knows besides the record. */
export interface RowContext {
  scope: StreamScope;
  /** When the request that got the record was sent (campaigns keep it, so an older observation never wins). */
  observedAt: Date;
  /** Where the parts of a record that cannot be placed go. */
  reject(part: RejectedPart): void;
}

/** Which rows of a table a complete scan vouches for, so that the missing ones can be soft-deleted. */
export interface SoftDeleteRule<R> {
  table: SyncedTableName;
  /** Column values that bound the scan, e.g. { campaign_uid }. */
  within(scope: StreamScope): Record<string, string>;
  /**
   * Natural keys (column values, as NATURAL_KEYS names them) of the rows of
   * `table` that a record vouches for; null when the record's list of them
   * could not be read (a lead whose `schedules` deviated), so that none of
   * them may be taken for deleted.
   */
  keys(record: R): Record<string, unknown>[] | null;
  /** The column naming the record a row hangs from, and that record's value in it: what `keys` returning null protects. */
  parent?: { column: string; of(record: R): string | number };
}

/** Rows of other tables that hang from rows of `from`, soft-deleted with them (a campaign's leads, events, ...). */
export interface CascadeRule {
  from: SyncedTableName;
  children: { table: SyncedTableName; /** The column holding the parent's key, e.g. campaign_uid. */ column: string }[];
  /**
   * The column of rejected_records that names the parent (campaign_uid): what was set aside under a deleted
   * parent is resolved with it, since the upstream no longer has it either (met again, it is rejected again).
   */
  rejectedUnder?: "campaign_uid";
  /**
   * The column of sync_checkpoints that names the parent (campaign_uid): a deleted parent's checkpoints are
   * forgotten with it, so that if it comes back it is read as new (a terminal campaign's final walks, done
   * before its deletion took its leads, would otherwise keep its leads from being walked ever again).
   */
  checkpointsUnder?: "campaign_uid";
}

/**
 * How the position in a paged listing is kept between runs:
 * - `rescan`: records change in place, so every cycle walks the listing from
 *   the start; the checkpoint only lets an interrupted walk resume.
 * - `append`: records only accumulate (event logs), so the next cycle resumes
 *   at the end of the last complete walk and reads only what is new.
 */
export type CheckpointRule = "rescan" | "append";

interface StreamBase<R> {
  name: StreamName;
  scope: "account" | "campaign";
  /** The name under which this stream's field issues are kept on a row, and its rejected records (default: the stream's name). */
  source?: string;
  /** The natural key as one text: what a walk anchors its cursor with, and what names a rejected part's parent. */
  key(record: R): string;
  /** The row mapping: one record becomes rows of one or more tables; parts it cannot place go to `context.reject`. */
  rows(record: ReadRecord<R>, context: RowContext): RowBatch;
  softDelete?: SoftDeleteRule<R>[];
  /** How many records a payload holds below it (a lead's contact, schedules, replies, clicks): what is lost with it when it cannot be placed. */
  childrenOf?(payload: unknown): number;
  /** What hangs from this stream's records in other tables, soft-deleted when the record is. */
  cascade?: CascadeRule[];
  /**
   * Tables where this stream's rows are copies of records another stream lists (a schedule's replies and
   * clicks): they add fields, but whether the record still exists is the listing's to say, so they never
   * bring a soft-deleted row back.
   */
  copiesInto?: SyncedTableName[];
  /** Table and filter whose live rows (plus rejected records) should number the upstream's records: checked by `verify` and after an append walk. */
  completeness?: { table: SyncedTableName; within(scope: StreamScope): Record<string, string> };
  /**
   * Whether the warehouse already holds a newer observation than this answer's (observed at `observedAt`) of
   * what it would write: an answer that arrived late, after a newer one or after its record's deletion, then
   * writes nothing. Run first in the answer's transaction; it locks what it reads, so that two answers of one
   * record are written one after the other.
   */
  supersededIn?(trx: Executor, scope: StreamScope, observedAt: Date): Promise<boolean>;
}

/**
 * How the rows of one soft-delete rule that a walk did not see (a proven walk, or two walks in a row of a
 * listing without a total) are confirmed gone before they are soft-deleted: each is asked for by its key (a listing in no guaranteed order can move a record behind the
 * cursor while another goes, and no count tells that walk apart from a whole one). Run by confirm-missing.ts.
 */
export interface MissingConfirmation<R> {
  /** The rule's table; its natural key is one column, the key `fetch` asks for. Rows of other rules whose `parent` is a kept row stay with it. */
  table: SyncedTableName;
  /** One record by its key: a 404 (UpstreamError) confirms the row gone, an answer shows it present. */
  fetch(client: UpstreamClient, key: string | number, signal?: AbortSignal): Promise<Lookup<R>>;
  /**
   * Lookups per walk at most (a random sample of the rows to confirm): when every one asked about is gone, the
   * rest are taken as one bulk deletion. What bounds a walk's requests against what a wrong deletion costs.
   */
  lookupsPerWalk: number;
}

export interface PagedStream<R> extends StreamBase<R> {
  kind: "paged";
  /** The listing (endpoint and record type, src/upstream/paging.ts). */
  resource: PagedResource;
  checkpoint: CheckpointRule;
  /** Without it, a proven walk soft-deletes every row it did not see at once. */
  confirmMissing?: MissingConfirmation<R>;
}

/** A listing that arrives whole in one response (workspaces, replies). */
export interface ListStream<R> extends StreamBase<R> {
  kind: "list";
  fetch(client: UpstreamClient, scope: StreamScope, signal?: AbortSignal): Promise<Listing<R>>;
}

/**
 * Records fetched one by one by identifier (a campaign's detail, email
 * sequences): the identifiers come from the warehouse or the scope.
 */
export interface LookupStream<R> extends StreamBase<R> {
  kind: "lookup";
  ids(db: Kysely<Database>, scope: StreamScope): Promise<readonly (string | number)[]>;
  fetch(client: UpstreamClient, id: string | number, signal?: AbortSignal): Promise<Lookup<R>>;
  /** Where a record the upstream no longer knows (404) is soft-deleted. */
  missing: { table: SyncedTableName; column: string };
  /**
   * Whether `ids` names every record of the scope the stream is ever to ask for again: then an answer it set
   * aside for an id `ids` no longer names is never met again, and is resolved when a run ends. Not so for ids
   * that are only the records due now (a lead refresh's).
   */
  idsNameAll: boolean;
}

export type StreamDefinition<R = unknown> = PagedStream<R> | ListStream<R> | LookupStream<R>;

/** The name a stream's field issues and rejected records are kept under: what its reads resolve those under too. */
export function sourceOf(stream: { name: StreamName; source?: string }): string {
  return stream.source ?? stream.name;
}
