import type { Kysely } from "kysely";
import type { Parsed, PagedResource, UpstreamClient } from "../upstream/client.ts";
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

/** Which rows of a table a complete scan vouches for, so that the missing ones can be soft-deleted. */
export interface SoftDeleteRule<R> {
  table: SyncedTableName;
  /** Column values that bound the scan, e.g. { campaign_uid }. */
  within(scope: StreamScope): Record<string, string>;
  /** Natural keys (column values, as NATURAL_KEYS names them) of the rows of `table` that a record vouches for. */
  keys(record: R): Record<string, unknown>[];
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
  /** The row mapping: one record becomes rows of one or more tables. */
  rows(record: R, scope: StreamScope): RowBatch;
  softDelete?: SoftDeleteRule<R>[];
  /** Table and filter whose live rows (plus rejected records) should number the upstream's records: checked after a walk and by `verify`. */
  completeness?: { table: SyncedTableName; within(scope: StreamScope): Record<string, string> };
}

export interface PagedStream<R> extends StreamBase<R> {
  kind: "paged";
  /** The listing (endpoint and the zod schema its records are validated with, src/upstream/paging.ts). */
  resource: PagedResource;
  /** The natural key as one text: what a resumed walk looks for to anchor its cursor. */
  key(record: R): string;
  checkpoint: CheckpointRule;
}

/** A listing that arrives whole in one response (workspaces, replies). */
export interface ListStream<R> extends StreamBase<R> {
  kind: "list";
  fetch(client: UpstreamClient, scope: StreamScope, signal?: AbortSignal): Promise<Parsed<R>>;
}

/**
 * Records fetched one by one by identifier (a campaign's detail, email
 * sequences): the identifiers come from the warehouse or the scope.
 */
export interface LookupStream<R> extends StreamBase<R> {
  kind: "lookup";
  ids(db: Kysely<Database>, scope: StreamScope, lastCompleteScanAt: Date | null): Promise<readonly (string | number)[]>;
  fetch(client: UpstreamClient, id: string | number, signal?: AbortSignal): Promise<R>;
  /** Where a record the upstream no longer knows (404) is soft-deleted. */
  missing: { table: SyncedTableName; column: string };
}

export type StreamDefinition<R = unknown> = PagedStream<R> | ListStream<R> | LookupStream<R>;
