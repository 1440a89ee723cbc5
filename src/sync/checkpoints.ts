import { sql, type Kysely, type Transaction } from "kysely";
import type { Database } from "../warehouse/database.ts";

/**
 * Where a stream stands for one (account, campaign, stream). A checkpoint is
 * written in the same transaction as the rows of the page it covers, so after
 * a crash the warehouse and the cursor always agree.
 */
export interface CheckpointKey {
  account: string;
  /** "" for account-level streams. */
  campaignUid: string;
  stream: string;
}

export interface CheckpointState {
  /** Natural keys of the last records before the cursor, newest last: the overlap a resumed walk must find again. */
  tail?: string[];
  /** The campaign status during the last proven walk of its leads (terminal: see `terminalWalks`). */
  scannedStatus?: string;
  /** Proven walks of the leads made while their campaign was terminal (absent on older checkpoints: one); two end its walks. */
  terminalWalks?: number;
  /**
   * Rows (`table:key`) the last read of a listing without a total (an unpaged one, or a walk whose pages announced
   * none usable) lacked: soft-deleted if the next such read lacks them too. A proven walk clears it.
   */
  missing?: string[];
  /** When the walk that left `missing` began (ISO): rejected records neither it nor the next one met are resolved. */
  missingSince?: string;
  /** The complete scan before the last one (ISO): with `last_complete_scan_at`, the cadence a rhythm achieved. */
  previousCompleteScanAt?: string;
  /** Rows the last proven walk did not see that were neither confirmed gone nor found (confirm-missing.ts): they stay live meanwhile. */
  unconfirmedMissing?: number;
  /** When a walk from the start last proved it saw every record (ISO): how long an append stream may go on continuing at its end. */
  provenAt?: string;
  /** Copies of records that one page repeated, as that proof counted them: a continuation adds them to the rows it counts. */
  repeated?: number;
  /** Leads a refresh found stale but could not take in its cycle (over the limit): the next cycle takes them first. */
  waiting?: string[];
  /** When the events rhythm began event reads whose stale leads are not saved yet (ISO): see campaign-sync.ts. */
  eventReadsSince?: string;
}

export interface Checkpoint {
  cursorOffset: number;
  upstreamTotal: number | null;
  fingerprint: string | null;
  scanStartedAt: Date | null;
  lastCompleteScanAt: Date | null;
  state: CheckpointState;
}

export const EMPTY_CHECKPOINT: Checkpoint = {
  cursorOffset: 0,
  upstreamTotal: null,
  fingerprint: null,
  scanStartedAt: null,
  lastCompleteScanAt: null,
  state: {},
};

export async function loadCheckpoint(db: Kysely<Database>, key: CheckpointKey): Promise<Checkpoint> {
  const row = await db
    .selectFrom("sync_checkpoints")
    .selectAll()
    .where("account", "=", key.account)
    .where("campaign_uid", "=", key.campaignUid)
    .where("stream", "=", key.stream)
    .executeTakeFirst();
  if (!row) return EMPTY_CHECKPOINT;
  return {
    cursorOffset: row.cursor_offset,
    upstreamTotal: row.upstream_total,
    fingerprint: row.fingerprint,
    scanStartedAt: row.scan_started_at,
    lastCompleteScanAt: row.last_complete_scan_at,
    state: (row.state ?? {}) as CheckpointState,
  };
}

export async function saveCheckpoint(
  trx: Transaction<Database> | Kysely<Database>,
  key: CheckpointKey,
  checkpoint: Checkpoint,
  runId: number,
): Promise<void> {
  const values = {
    cursor_offset: checkpoint.cursorOffset,
    upstream_total: checkpoint.upstreamTotal,
    fingerprint: checkpoint.fingerprint,
    scan_started_at: checkpoint.scanStartedAt,
    last_complete_scan_at: checkpoint.lastCompleteScanAt,
    last_run_id: runId,
    state: JSON.stringify(checkpoint.state),
    updated_at: new Date(),
  };
  // A deleted campaign's checkpoints are forgotten with it (CAMPAIGN_CHILDREN.checkpointsUnder): a page or a walk's
  // completion that lands after the deletion must not save one again, or a campaign that comes back would resume
  // it (a terminal campaign's final walks would keep its leads from being walked). The row is taken FOR SHARE, so
  // a deletion under way is waited for and seen, and one that starts later deletes what this saves. An account's
  // checkpoint (campaign_uid "") names no campaign row, so nothing holds it back.
  await sql`
    WITH held AS (SELECT _deleted_at FROM campaigns WHERE uid = ${key.campaignUid} FOR SHARE)
    INSERT INTO sync_checkpoints
      (account, campaign_uid, stream, cursor_offset, upstream_total, fingerprint, scan_started_at, last_complete_scan_at, last_run_id, state, updated_at)
    SELECT CAST(${key.account} AS text), CAST(${key.campaignUid} AS text), CAST(${key.stream} AS text), CAST(${values.cursor_offset} AS integer),
           CAST(${values.upstream_total} AS integer), CAST(${values.fingerprint} AS text),
           CAST(${values.scan_started_at} AS timestamptz), CAST(${values.last_complete_scan_at} AS timestamptz), CAST(${values.last_run_id} AS bigint),
           CAST(${values.state} AS jsonb), CAST(${values.updated_at} AS timestamptz)
     WHERE NOT EXISTS (SELECT 1 FROM held WHERE _deleted_at IS NOT NULL)
    ON CONFLICT (account, campaign_uid, stream) DO UPDATE SET
      cursor_offset = excluded.cursor_offset, upstream_total = excluded.upstream_total, fingerprint = excluded.fingerprint,
      scan_started_at = excluded.scan_started_at, last_complete_scan_at = excluded.last_complete_scan_at,
      last_run_id = excluded.last_run_id, state = excluded.state, updated_at = excluded.updated_at`.execute(trx);
}

/** The state that remembers a checkpoint's last complete scan as the previous one, when the next one completes. */
export function previousScan(checkpoint: Checkpoint): Pick<CheckpointState, "previousCompleteScanAt"> {
  return checkpoint.lastCompleteScanAt === null ? {} : { previousCompleteScanAt: checkpoint.lastCompleteScanAt.toISOString() };
}
