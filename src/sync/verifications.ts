import type { Kysely } from "kysely";
import type { Database } from "../warehouse/database.ts";
import type { RunTrigger } from "./context.ts";
import type { VerifyLine, VerifyResult } from "./verify.ts";

/**
 * Each verification's verdict, kept in `verifications` so that every worker's /metrics shows the last one on the
 * whole account (a `verify --campaign` is no verdict on the others).
 */

export async function recordVerification(
  db: Kysely<Database>,
  scope: { account: string; campaignUid: string | null },
  trigger: RunTrigger,
  startedAt: Date,
  result: VerifyResult,
): Promise<void> {
  await db
    .insertInto("verifications")
    .values({
      account: scope.account,
      campaign_uid: scope.campaignUid,
      trigger,
      started_at: startedAt,
      finished_at: new Date(),
      checks: result.lines.length,
      problems: result.problems,
      requests: result.requests,
      lines: JSON.stringify(result.lines.filter((line) => line.status !== "ok")),
    })
    .execute();
}

export interface LastVerification {
  finishedAt: Date;
  checks: number;
  /** The lines that were not ok. */
  problems: VerifyLine[];
}

/** The last verification of the whole account. */
export async function lastVerification(db: Kysely<Database>, account: string): Promise<LastVerification | undefined> {
  const row = await db
    .selectFrom("verifications")
    .select(["finished_at", "checks", "lines"])
    .where("account", "=", account)
    .where("campaign_uid", "is", null)
    .orderBy("finished_at", "desc")
    .limit(1)
    .executeTakeFirst();
  return row && { finishedAt: row.finished_at, checks: row.checks, problems: row.lines as VerifyLine[] };
}
