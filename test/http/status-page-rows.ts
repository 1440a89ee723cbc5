import { sql } from "kysely";
import type { Cadence } from "../../src/queue/cadence.ts";
import type { Warehouse } from "../../src/warehouse/connect.ts";
import { recordRejected } from "../../src/warehouse/rejected.ts";
import { upsert } from "../../src/warehouse/upsert.ts";
import { campaignListingRow, contactRow, leadRow, listedReplyRow, scheduleRow } from "../warehouse/rows.ts";

/**
 * A warehouse with known rows for the status page's queries: four campaigns
 * of account "acme" in four situations, one of another account that must not
 * show, runs with errors old and new, rejected records, field issues, and a
 * little engagement. Every time is relative to NOW.
 */

export const ACCOUNT = "acme";
export const NOW = new Date("2026-06-01T12:00:00.000Z");
/** Events run with the leads here (COLDSYNC_EVENTS_EVERY=off): every stream follows the status's cadence. */
export const CADENCE: Cadence = {
  activeEveryMs: 15 * 60_000,
  idleEveryMs: 3_600_000,
  terminalEveryMs: 86_400_000,
  discoverEveryMs: 5 * 60_000,
  eventsEveryMs: undefined,
};

const ago = (ms: number) => new Date(NOW.getTime() - ms);
const MIN = 60_000;
const HOUR = 60 * MIN;

export const CAMPAIGN_STREAMS = ["campaign_detail", "leads", "replies", "link_clicks", "email_opens", "email_sequences"];

export const UIDS = { fresh: "c-fresh", behind: "c-behind", never: "c-never", done: "c-done", other: "x-other" } as const;

export const BEHIND_ERROR = "server error (503): email_opens of campaign c-behind";
export const ACCOUNT_ERROR = "domains: network error: socket hang up";
/** A name that would run script if the page did not escape it. */
export const HOSTILE_NAME = `<script>document.title="owned"</script> & "quotes"`;

export async function seedStatusRows(warehouse: Warehouse): Promise<void> {
  const { db } = warehouse;
  await upsert(
    db,
    "campaigns",
    [
      campaignListingRow(UIDS.fresh, { status: "running", name: HOSTILE_NAME, created_on: ago(40 * 24 * HOUR) }),
      campaignListingRow(UIDS.behind, { status: "running", created_on: ago(30 * 24 * HOUR) }),
      campaignListingRow(UIDS.never, { status: "created", created_on: ago(20 * 24 * HOUR) }),
      campaignListingRow(UIDS.done, { status: "complete", created_on: ago(10 * 24 * HOUR) }),
      campaignListingRow(UIDS.other, { status: "running", _account: "other" }),
    ],
    ago(HOUR),
  );

  const checkpoint = (account: string, campaign_uid: string, stream: string, at: Date | null) => ({
    account,
    campaign_uid,
    stream,
    last_complete_scan_at: at,
    updated_at: at ?? NOW,
  });
  await db
    .insertInto("sync_checkpoints")
    .values([
      ...CAMPAIGN_STREAMS.map((stream) => checkpoint(ACCOUNT, UIDS.fresh, stream, ago(10 * MIN))),
      // One stale stream makes the campaign 2 h behind a 15 min cadence.
      ...CAMPAIGN_STREAMS.map((stream) => checkpoint(ACCOUNT, UIDS.behind, stream, stream === "email_opens" ? ago(2 * HOUR) : ago(10 * MIN))),
      // A terminal campaign's leads and email sequences had their final walks days ago; they do not count towards its lag.
      ...CAMPAIGN_STREAMS.map((stream) => ({
        ...checkpoint(ACCOUNT, UIDS.done, stream, ["leads", "email_sequences"].includes(stream) ? ago(72 * HOUR) : ago(HOUR)),
        ...(stream === "leads" ? { state: JSON.stringify({ scannedStatus: "complete", terminalWalks: 2 }) } : {}),
      })),
      ...["workspaces", "domains", "contact_lists", "campaigns"].map((stream) => checkpoint(ACCOUNT, "", stream, ago(10 * MIN))),
      checkpoint("other", UIDS.other, "leads", ago(MIN)),
    ])
    .execute();

  const run = (values: {
    scope: string | null;
    started: Date;
    finished: Date | null;
    outcome: "succeeded" | "partial" | "failed" | "running";
    requests: number;
    errors?: unknown[];
    fieldIssues?: Record<string, number>;
    account?: string;
  }) => ({
    account: values.account ?? ACCOUNT,
    scope: values.scope,
    trigger: "worker" as const,
    started_at: values.started,
    finished_at: values.finished,
    outcome: values.outcome,
    requests: values.requests,
    errors: JSON.stringify(values.errors ?? []),
    field_issues: JSON.stringify(values.fieldIssues ?? {}),
  });
  await db
    .insertInto("sync_runs")
    .values([
      // The complete campaign failed three hours ago, and every stream that counts has completed since.
      run({ scope: null, started: ago(3 * HOUR), finished: ago(3 * HOUR - MIN), outcome: "partial", requests: 600, errors: [{ campaign_uid: UIDS.done, stream: "leads", message: "old failure" }] }),
      run({ scope: UIDS.behind, started: ago(20 * MIN), finished: ago(19 * MIN), outcome: "partial", requests: 120, errors: [{ campaign_uid: UIDS.behind, stream: "email_opens", message: BEHIND_ERROR }], fieldIssues: { "leads.total": 2, "schedules.status": 5 } }),
      run({ scope: null, started: ago(5 * MIN), finished: ago(4 * MIN), outcome: "partial", requests: 30, errors: [{ campaign_uid: null, stream: "domains", message: ACCOUNT_ERROR }] }),
      run({ scope: UIDS.fresh, started: ago(MIN), finished: null, outcome: "running", requests: 0 }),
      run({ scope: null, started: ago(2 * MIN), finished: ago(MIN), outcome: "failed", requests: 999, errors: [{ campaign_uid: UIDS.other, stream: "leads", message: "other account" }], account: "other" }),
    ])
    .execute();
  await db
    .insertInto("verifications")
    .values({ account: ACCOUNT, trigger: "worker", started_at: ago(32 * MIN), finished_at: ago(30 * MIN), checks: 10, problems: 0, requests: 40, lines: "[]" })
    .execute();

  const rejected = (campaign_uid: string | null, stream: string, record_key: string) => ({
    run_id: null,
    account: ACCOUNT,
    stream,
    campaign_uid,
    reason: "uid: missing",
    payload: { record_key },
    record_key,
    key_identifies: true,
    parent_key: null,
    skipped: 2,
  });
  await recordRejected(db, [rejected(UIDS.behind, "leads", "a"), rejected(UIDS.fresh, "leads", "b"), rejected(null, "domains", "c")], ago(HOUR));
  await db.updateTable("rejected_records").set({ resolved_at: ago(MIN) }).where("record_key", "=", "b").execute();

  // Engagement of c-fresh: two leads, two schedules sent on 05-20 and 05-28, a click, a positive reply, an open.
  const leads = [leadRow("l-1", UIDS.fresh, 1), leadRow("l-2", UIDS.fresh, 2), leadRow("l-x", UIDS.other, 3)];
  await upsert(db, "contacts", [contactRow(1), contactRow(2), contactRow(3)], ago(HOUR));
  await upsert(db, "leads", leads, ago(HOUR));
  await upsert(
    db,
    "schedules",
    [
      scheduleRow(11, { uid: "l-1", campaign_uid: UIDS.fresh }, 1, { sent_on: new Date("2026-05-20T09:00:00Z"), status: "sent" }),
      scheduleRow(12, { uid: "l-2", campaign_uid: UIDS.fresh }, 1, { sent_on: new Date("2026-05-28T09:00:00Z"), status: "sent" }),
      // Another account's later activity must not move acme's window.
      scheduleRow(13, { uid: "l-x", campaign_uid: UIDS.other }, 1, { sent_on: new Date("2026-05-31T09:00:00Z"), status: "sent" }),
    ],
    ago(HOUR),
  );
  await upsert(db, "replies", [listedReplyRow(21, UIDS.fresh, 11, { received_on: new Date("2026-05-21T10:00:00Z") })], ago(HOUR));
  await upsert(db, "link_clicks", [{ campaign_uid: UIDS.fresh, schedule_id: 11, link: "https://example.com", clicked_on: new Date("2026-05-20T10:00:00Z") }], ago(HOUR));
  await upsert(db, "email_opens", [{ campaign_uid: UIDS.fresh, schedule_id: 12, opened_on: new Date("2026-05-28T10:00:00Z") }], ago(HOUR));

  // Field issues: two leads and a schedule of c-fresh, and c-behind's own row.
  const issue = sql`'{"leads": {"sender_name": {"reason": "expected a string, got an object", "raw": {}, "first_seen_at": "2026-06-01T00:00:00Z"}}}'::jsonb`;
  await db.updateTable("leads").set({ _field_issues: issue }).where("uid", "in", ["l-1", "l-2"]).execute();
  await db.updateTable("schedules").set({ _field_issues: issue }).where("id", "=", 11).execute();
  await db.updateTable("campaigns").set({ _field_issues: issue }).where("uid", "=", UIDS.behind).execute();
}
