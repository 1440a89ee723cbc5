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
 * `campaigns._observed_at` orders the observations of the summary columns (status, name, ...). A detail read whose
 * status could not be read (left out of its row, README "When the upstream deviates") observed no status: it must
 * not move `_observed_at` to its own time, or a listing page sent before it (after the last status read) and
 * committed after it would lose the status it read, and the history would never record the change. A detail that
 * read the status but not the name observed the status: it moves `_observed_at`, so such a listing page does not
 * write back its older status (which the history would record as a change that never happened).
 */

const [postgres] = useBackends("detail_observations");

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

describe("a campaign detail that could not read a summary column", () => {
  const warehouse = useMigratedWarehouse(postgres!);
  beforeEach(async () => {
    for (const table of ["campaigns", "campaign_sending_domains", "campaign_history"]) await sql`DELETE FROM ${sql.table(table)}`.execute(warehouse().db);
  });

  it("whose status it could not read does not make a listing page that read a newer status, sent before it and committed after it, lose that status", async () => {
    const { db } = warehouse();
    // T1: a clean detail, running.
    await writeDetail(db, buildCampaign("a", "running"), T1, T1);
    // The campaign is paused. Discovery's listing page is sent at T2; the campaign job's detail, sent at T3,
    // answers with a status the warehouse cannot read (null) and commits first.
    await writeDetail(db, { ...buildCampaign("a", "paused"), status: null }, T3, T3);
    await upsert(db, "campaigns", [campaignListingRow("a", { name: "Campaign a", status: "paused", _observed_at: T2 })], T4, { source: "campaigns" });
    const row = await db.selectFrom("campaigns").select(["status"]).where("uid", "=", "a").executeTakeFirstOrThrow();
    const history = await db.selectFrom("campaign_history").select(["status"]).where("campaign_uid", "=", "a").orderBy("valid_from").execute();
    // The only status read after T1 said paused.
    expect({ status: row.status, history: history.map((version) => version.status).at(-1) }).toEqual({ status: "paused", history: "paused" });
  });

  it("that read the status but not the name keeps the newer status when an older listing page commits after it", async () => {
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
