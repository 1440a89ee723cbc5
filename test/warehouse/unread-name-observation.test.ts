import { sql } from "kysely";
import { beforeEach, describe, expect, it } from "vitest";
import { mapPage } from "../../src/sync/page-writer.ts";
import { campaignDetail } from "../../src/sync/streams/index.ts";
import { readRecord } from "../../src/upstream/parsing.ts";
import { upsert } from "../../src/warehouse/upsert.ts";
import { buildCampaign } from "../support/scripted-upstream.ts";
import { useBackends, useMigratedWarehouse } from "./backends.ts";
import { campaignListingRow } from "./rows.ts";

/**
 * A detail that read the status but not the name (or workspace_id, created_on) observed the status: it moves
 * `_observed_at`, so a listing page sent before it and committed after it does not write back its older status
 * (which the history would record as a change that never happened). Only a detail whose status could not be read
 * leaves `_observed_at` as it was (unread-status-observation.test.ts).
 */

const [postgres] = useBackends("unread_name_observation");

const T1 = new Date("2024-03-01T12:00:00Z");
const T2 = new Date("2024-03-01T13:00:00Z");
const T3 = new Date("2024-03-01T14:00:00Z");
const T4 = new Date("2024-03-01T15:00:00Z");

async function writeDetail(db: Parameters<typeof upsert>[0], body: unknown, observedAt: Date, syncedAt: Date) {
  const read = readRecord("campaign_detail", body);
  if (!("record" in read)) throw new Error("the detail was rejected");
  const { batch } = mapPage(campaignDetail, [read.record], { account: "acme", campaignUid: "a" }, observedAt);
  await upsert(db, "campaigns", batch.campaigns as never, syncedAt, { source: "campaign_detail" });
}

describe("a campaign detail whose name cannot be read but whose status can", () => {
  const warehouse = useMigratedWarehouse(postgres!);
  beforeEach(async () => {
    for (const table of ["campaigns", "campaign_sending_domains", "campaign_history"]) await sql`DELETE FROM ${sql.table(table)}`.execute(warehouse().db);
  });

  it("keeps the newer status it read when an older listing page commits after it", async () => {
    const { db } = warehouse();
    // T1: a clean detail, running.
    await writeDetail(db, buildCampaign("a", "running"), T1, T1);
    // The listing page is sent at T2 (still running); the campaign is then paused, and the detail sent at T3 reads
    // `paused` but a name it cannot read; it commits first, the listing page after it.
    const paused = buildCampaign("a", "paused");
    await writeDetail(db, { ...paused, settings: { ...paused.settings, name: { garbled: true } } }, T3, T3);
    await upsert(db, "campaigns", [campaignListingRow("a", { name: "Campaign a", status: "running", _observed_at: T2 })], T4, { source: "campaigns" });
    const row = await db.selectFrom("campaigns").select(["status"]).where("uid", "=", "a").executeTakeFirstOrThrow();
    const history = await db.selectFrom("campaign_history").select(["status"]).where("campaign_uid", "=", "a").orderBy("valid_from").execute();
    // The newest status read (T3) said paused.
    expect({ status: row.status, history: history.map((version) => version.status) }).toEqual({ status: "paused", history: ["running", "paused"] });
  });
});
