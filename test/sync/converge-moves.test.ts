import { describe, expect, it } from "vitest";
import { runCampaignSync } from "../../src/sync/runs.ts";
import { TEST_KEY } from "../support/sync.ts";
import { diffWithTruth, warehouseKeys } from "../support/truth.ts";
import { problems, cycle, useWorlds } from "../support/world-fixture.ts";

const openWorld = useWorlds("converge_moves");

describe("records that move upstream", () => {
  it("a lead's contact replaced by another contact: the old contact, held by no lead, is no longer live", async () => {
    const f = await openWorld("conv_contact_swap");
    await cycle(f, "all");
    const c = f.account.campaigns.items.find((x) => x.status === "running" && x.leads.items.length > 2)!;
    const lead = c.leads.items.find((l) => c.workspace.contacts.length > 0 && f.account.campaigns.items.every((other) => other.leads.items.every((o) => o === l || o.contact !== l.contact)))!;
    const oldContact = lead.contact.id;
    const id = f.world.ids.take("contact");
    const contact = { id, email: `swapped-${id}@example.com`, bounced: false, unsubscribed: false };
    c.workspace.contacts.push(contact);
    lead.contact = contact;
    await cycle(f, "all");
    await cycle(f, "all");
    const row = await f.warehouse.db.selectFrom("contacts").select(["id", "_deleted_at"]).where("id", "=", oldContact).executeTakeFirstOrThrow();
    // Every signal is green: each run succeeded (cycle), and verify --deep=all --values finds nothing.
    expect(await problems(f)).toEqual([]);
    expect(diffWithTruth(f.emulator.truth(TEST_KEY), await warehouseKeys(f.warehouse.db))).toEqual({});
    expect(row._deleted_at).not.toBeNull();
  }, 120_000);

  it.each(["source first", "destination first"] as const)("a lead moved from one created campaign to another (%s): held once, under its new campaign", async (order) => {
    const f = await openWorld(`conv_lead_move_${order === "source first" ? "src" : "dst"}`);
    await cycle(f, "all");
    const created = f.account.campaigns.items.filter((x) => x.status === "created" && x.leads.items.length > 1 && x.sequences.length > 0);
    const [a, b] = [created[0]!, created.find((x) => x !== created[0] && x.workspace === created[0]!.workspace) ?? created[1]!];
    const lead = a.leads.items[0]!;
    a.leads.remove(lead);
    lead.campaign = b;
    for (const s of lead.schedules) s.sequence = b.sequences[0]!;
    b.leads.push(lead);
    a.sendQueue = null;
    b.sendQueue = null;
    const uid = f.world.leadUid(lead);
    const ctx = f.context({ trigger: "worker" });
    const first = order === "source first" ? [a, b] : [b, a];
    for (const x of first) expect((await runCampaignSync(ctx, x.uid, "leads")).outcome).toBe("succeeded");
    for (const x of first) expect((await runCampaignSync(ctx, x.uid, "leads")).outcome).toBe("succeeded");
    const rows = await f.warehouse.db.selectFrom("leads").select(["uid", "campaign_uid", "_deleted_at"]).where("uid", "=", uid).execute();
    expect(rows).toEqual([{ uid, campaign_uid: b.uid, _deleted_at: null }]);
    const schedules = await f.warehouse.db.selectFrom("schedules").select(["campaign_uid", "_deleted_at"]).where("lead_uid", "=", uid).execute();
    expect(schedules.map((s) => [s.campaign_uid, s._deleted_at])).toEqual(lead.schedules.map(() => [b.uid, null]));
    expect(diffWithTruth(f.emulator.truth(TEST_KEY), await warehouseKeys(f.warehouse.db))).toEqual({});
    expect(await problems(f)).toEqual([]);
  }, 120_000);

  it("a reply removed upstream (the lead stays): soft-deleted, and the schedule's flag follows", async () => {
    const f = await openWorld("conv_reply_gone");
    await cycle(f, "all");
    const c = f.account.campaigns.items.find((x) => x.status === "running" && x.replies.items.length > 0)!;
    const reply = c.replies.items[0]!;
    c.replies.remove(reply);
    reply.schedule.replies = reply.schedule.replies?.filter((r) => r !== reply) ?? null;
    if (reply.schedule.replies?.length === 0) reply.schedule.replies = null;
    await cycle(f, "events");
    await cycle(f, "events");
    await cycle(f, "events");
    const row = await f.warehouse.db.selectFrom("replies").select(["_deleted_at"]).where("id", "=", reply.id).executeTakeFirstOrThrow();
    expect(row._deleted_at).not.toBeNull();
    await cycle(f, "leads");
    expect(diffWithTruth(f.emulator.truth(TEST_KEY), await warehouseKeys(f.warehouse.db))).toEqual({});
    expect(await problems(f)).toEqual([]);
  }, 120_000);
});
