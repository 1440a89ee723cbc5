import { setTimeout as sleep } from "node:timers/promises";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { mapPage, writeRows } from "../../src/sync/page-writer.ts";
import { runCampaignSync, runFullSync } from "../../src/sync/runs.ts";
import { leads } from "../../src/sync/streams/index.ts";
import { verify } from "../../src/sync/verify.ts";
import { markDeletedKeys } from "../../src/warehouse/mark-deleted.ts";
import type { Lead } from "../../src/upstream/resources.ts";
import { buildCampaign, buildLead, buildSequence } from "../support/scripted-upstream.ts";
import { CAMPAIGN, leadsOf, useEngineHarness } from "./engine-harness.ts";

/**
 * A contact shared by two campaigns' leads. Campaign A's walk finds its lead L1 gone while campaign B's page
 * (sync --once runs three campaigns at once) inserts LB1, which holds the same contact. B's page transaction locks
 * the contact row (its ON CONFLICT DO UPDATE, even when nothing changes) and inserts LB1; A's deletion of L1 runs
 * retire_orphan_contacts(), which waits for that lock; it must then look for the contact's holders again (migration
 * 0021): with the snapshot it took before B committed, no live lead holds the contact, and LB1 stayed live beside a
 * retired contact, every signal saying all was well.
 */

const harness = useEngineHarness("contact_shared");
const B = "cmp_b";

describe("a contact shared by leads of two campaigns", () => {
  it("stays live when one campaign's lead goes while another campaign's page inserts a lead holding it", async () => {
    const h = await harness(1);
    h.upstream.state.campaigns.push(buildCampaign(B, "running"));
    h.upstream.state.sequences.set(2, buildSequence(2));
    h.upstream.state.leads.set(B, []);
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    const contactId = (leadsOf(h)[0] as Lead).contact.id;

    // Upstream: L1 leaves A; B gets LB1, a lead of the same contact.
    const lb1 = buildLead("LB1", 2001, 2);
    lb1.contact = { ...(leadsOf(h)[0] as Lead).contact };
    h.upstream.state.leads.set(CAMPAIGN, []);
    h.upstream.state.leads.set(B, [lb1]);

    const db = h.warehouse.db;
    const walkStartedAt = new Date();
    const pageObservedAt = new Date();
    let releaseB: () => void = () => undefined;
    const bMayCommit = new Promise<void>((resolve) => (releaseB = resolve));
    let bWrote: () => void = () => undefined;
    const bHasWritten = new Promise<void>((resolve) => (bWrote = resolve));

    // B's leads page, written as writePage writes it (contacts first: tables in name order).
    const pageB = db.transaction().execute(async (trx) => {
      const { batch } = mapPage(leads, [{ value: lb1, issues: [], raw: lb1 }], { account: "acme", campaignUid: B }, pageObservedAt);
      await writeRows(trx, batch, new Date(), { name: "leads", copiesInto: leads.copiesInto });
      bWrote();
      await bMayCommit;
    });
    await bHasWritten;
    // A's walk completion: L1 (and its schedule) confirmed gone.
    const completionA = db.transaction().execute(async (trx) => {
      const at = new Date();
      await markDeletedKeys(trx, "schedules", { campaign_uid: CAMPAIGN }, [{ id: 1001 }], at, walkStartedAt);
      await markDeletedKeys(trx, "leads", { campaign_uid: CAMPAIGN }, [{ uid: "L1" }], at, walkStartedAt);
    });
    // A's retirement now waits for the contact row B's page locked: B commits only once it does.
    for (let tries = 0; tries < 200; tries++) {
      const { rows } = await sql<{ waiting: number }>`SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(db);
      if ((rows[0]?.waiting ?? 0) > 0) break;
      await sleep(50);
    }
    releaseB();
    await pageB;
    await completionA;
    // The rest of A's cycle (its walk finds nothing more; its sequence retires).
    expect((await runCampaignSync(h.context(), CAMPAIGN)).outcome).toBe("succeeded");

    const lead = await db.selectFrom("leads").select(["contact_id", "_deleted_at"]).where("uid", "=", "LB1").executeTakeFirstOrThrow();
    expect(lead._deleted_at).toBeNull();
    expect(Number(lead.contact_id)).toBe(contactId);

    const contact = await db.selectFrom("contacts").select("_deleted_at").where("id", "=", contactId).executeTakeFirstOrThrow();
    expect(contact._deleted_at, "the contact of live lead LB1 is held as deleted").toBeNull();
    const lines = [...(await verify(h.context())).lines, ...(await verify(h.context(), { deep: "all" })).lines];
    expect(lines.filter((line) => line.status !== "ok")).toEqual([]);
  });

  it("is named missing by verify when it is held as deleted while a live lead holds it", async () => {
    const h = await harness(1);
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    const contactId = (leadsOf(h)[0] as Lead).contact.id;
    // Whatever retired it (a restore, a write outside coldsync, a race no trigger saw): the lead still holds it.
    await h.warehouse.db.updateTable("contacts").set({ _deleted_at: new Date() }).where("id", "=", contactId).execute();

    const lines = (await verify(h.context())).lines.filter((line) => line.status !== "ok");
    expect(lines).toEqual([
      expect.objectContaining({ campaignUid: null, stream: "contacts", status: "missing", upstream: 1, warehouse: 0, missingKeys: { count: 1, first: [String(contactId)] } }),
    ]);
  });
});
