import { sql } from "kysely";
import type { Executor } from "./column-arrays.ts";

export interface RejectedRecordInput {
  run_id: number | null;
  account: string;
  stream: string;
  campaign_uid: string | null;
  reason: string;
  payload: unknown;
  /** The readable part of the record's key, `field=value|…`, or null. */
  record_key: string | null;
  /** Whether `record_key` tells the record apart on its own (a reply's id); when not, its payload does too. */
  key_identifies: boolean;
  /** The key of the record a rejected part came in, or null. */
  parent_key: string | null;
  skipped: number;
}

/**
 * Keeps records that could not be placed, one row per (account, stream,
 * identity). The identity is the campaign and parent they came in plus the
 * readable part of their key when that names the record alone (a reply that
 * lost its schedule_id keeps its id), so such a record that stays
 * unplaceable while it changes is one row with its latest payload.
 * Otherwise the payload's hash is part of it (taken over jsonb's normal text
 * form, so a replayed page, keys in another order, bumps times_seen instead
 * of adding a row): two opens of one schedule that both lost opened_on are
 * two rows. An identity too long for its index is kept as its hash. Meeting
 * one again un-resolves it.
 */
/**
 * An identity spelled longer than this is kept as its hash: the unique index
 * on it refuses entries above 2704 bytes, and a record's keys are each
 * allowed up to 2000 (INDEXABLE_KEY_BYTES), so campaign, parent and key
 * together can exceed it.
 */
const IDENTITY_SPELLED_BYTES = 2000;

export async function recordRejected(db: Executor, rows: readonly RejectedRecordInput[], at: Date): Promise<void> {
  if (rows.length === 0) return;
  const records = rows.map((row) => ({ ...row, payload: row.payload === undefined ? null : row.payload }));
  await sql`
    WITH input AS (
      SELECT r.run_id, r.account, r.stream, r.campaign_uid, r.reason, r.record_key, r.parent_key, r.skipped,
             COALESCE(r.payload, 'null'::jsonb) AS payload,
             COALESCE((e.item ->> 'key_identifies')::boolean, false) AS key_identifies,
             e.ordinality
        FROM jsonb_array_elements(CAST(${JSON.stringify(records)} AS jsonb)) WITH ORDINALITY AS e(item, ordinality)
       CROSS JOIN LATERAL jsonb_populate_record(NULL::rejected_records, e.item) AS r
    ),
    hashed AS (
      SELECT input.*, encode(sha256(convert_to(payload::text, 'UTF8')), 'hex') AS payload_sha256 FROM input
    ),
    spelled AS (
      SELECT hashed.*,
             COALESCE(campaign_uid, '') || '/' || COALESCE(parent_key, '') || '/' ||
               CASE
                 WHEN record_key IS NULL THEN 'sha:' || payload_sha256
                 WHEN key_identifies THEN 'key:' || record_key
                 ELSE 'key:' || record_key || '|sha:' || payload_sha256
               END AS spelled_identity
        FROM hashed
    ),
    identified AS (
      SELECT spelled.*,
             CASE WHEN octet_length(spelled_identity) > ${IDENTITY_SPELLED_BYTES}
                  THEN 'sha:' || encode(sha256(convert_to(spelled_identity, 'UTF8')), 'hex')
                  ELSE spelled_identity
             END AS identity
        FROM spelled
    ),
    grouped AS (
      SELECT DISTINCT ON (account, stream, identity)
             run_id, account, stream, campaign_uid, reason, payload, payload_sha256, record_key, parent_key, skipped, identity,
             count(*) OVER same_record AS copies,
             min(ordinality) OVER same_record AS first_position
        FROM identified
      WINDOW same_record AS (PARTITION BY account, stream, identity)
       ORDER BY account, stream, identity, ordinality DESC
    )
    INSERT INTO rejected_records AS t
      (run_id, account, stream, campaign_uid, reason, payload, payload_sha256, record_key, parent_key, skipped, identity,
       first_seen_at, last_seen_at, times_seen)
    SELECT run_id, account, stream, campaign_uid, reason, payload, payload_sha256, record_key, parent_key, COALESCE(skipped, 0), identity,
           CAST(${at} AS timestamptz), CAST(${at} AS timestamptz), copies
      FROM grouped
     ORDER BY first_position
    ON CONFLICT (account, stream, identity) DO UPDATE
      SET last_seen_at = excluded.last_seen_at,
          times_seen = t.times_seen + excluded.times_seen,
          run_id = COALESCE(excluded.run_id, t.run_id),
          reason = excluded.reason,
          payload = excluded.payload,
          payload_sha256 = excluded.payload_sha256,
          skipped = excluded.skipped,
          resolved_at = NULL`.execute(db);
}
