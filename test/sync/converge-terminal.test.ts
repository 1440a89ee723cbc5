import { sql } from "kysely";
import { afterEach, describe, expect, it, vi } from "vitest";
import { applyLifecycle, updateCampaign } from "../../src/emulator/operations.ts";
import { advance } from "../../src/emulator/simulate.ts";
import { removeCampaign, removeClick, removeLead, removeOpen } from "../../src/emulator/store/removals.ts";
import { runDiscovery } from "../../src/sync/runs.ts";
import { TEST_KEY } from "../support/sync.ts";
import { diffWithTruth, warehouseKeys } from "../support/truth.ts";
import { problems, historyProblems, cycle, useWorlds } from "../support/world-fixture.ts";

const openWorld = useWorlds("converge_terminal");

function jumpWallClock(ms: number) {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(Date.now() + ms);
}
afterEach(() => vi.useRealTimers());

describe("terminal campaigns after their final walks", () => {
  it("an open, a click and a lead with events removed upstream: events cycles converge", async () => {
    const f = await openWorld("conv_term_events");
    await cycle(f, "all");
    await cycle(f, "all");
    await cycle(f, "all");
    const terminal = f.account.campaigns.items.filter((c) => c.status === "complete" && c.opens.items.length > 2 && c.clicks.items.length > 0);
    expect(terminal.length).toBeGreaterThan(0);
    const c = terminal[0]!;
    const open = c.opens.items.find((o) => o.schedule.openCount >= 2) ?? c.opens.items[0]!;
    const openSchedule = open.schedule.id;
    removeOpen(open);
    removeClick(c.clicks.items[0]!);
    const leadWithReply = c.leads.items.find((l) => l.schedules.some((s) => (s.replies?.length ?? 0) > 0 && s.lead !== open.schedule.lead));
    if (leadWithReply) removeLead(f.account, leadWithReply);
    await cycle(f, "events");
    await cycle(f, "events");
    jumpWallClock(2 * 3600_000);
    await cycle(f, "events");
    await cycle(f, "events");
    await cycle(f, "leads");
    const row = await f.warehouse.db.selectFrom("schedules").select(["email_open_count", "email_opened_on"]).where("id", "=", openSchedule).executeTakeFirstOrThrow();
    expect(row.email_open_count).toBe(open.schedule.openCount);
    expect(diffWithTruth(f.emulator.truth(TEST_KEY), await warehouseKeys(f.warehouse.db))).toEqual({});
    expect(await problems(f)).toEqual([]);
  }, 120_000);

  it("a running campaign cancelled: its created schedules become cancelled in the warehouse", async () => {
    const f = await openWorld("conv_cancel");
    await cycle(f, "all");
    const c = f.account.campaigns.items.find((x) => x.status === "running" && x.leads.items.some((l) => l.schedules.some((s) => s.status === "created")))!;
    applyLifecycle(f.world, c, "cancel");
    await cycle(f, "leads");
    await cycle(f, "events");
    await cycle(f, "leads");
    await cycle(f, "leads");
    const held = await sql<{ status: string; n: number }>`select status, count(*)::int as n from schedules where campaign_uid = ${c.uid} and _deleted_at is null group by status order by status`.execute(f.warehouse.db);
    const up: Record<string, number> = {};
    for (const l of c.leads.items) for (const s of l.schedules) up[s.status] = (up[s.status] ?? 0) + 1;
    expect(Object.fromEntries(held.rows.map((r) => [r.status, r.n]))).toEqual(up);
    expect(await historyProblems(f)).toEqual([]);
    expect(await problems(f)).toEqual([]);
  }, 120_000);

  it("settings and sending domains of a created campaign updated twice (A -> B -> A and B): history and rows follow", async () => {
    const f = await openWorld("conv_settings");
    await cycle(f, "all");
    const c = f.account.campaigns.items.find((x) => x.status === "created" && x.leads.items.length > 0)!;
    const original = { ...c.settings };
    const domains = f.account.domains.items.filter((d) => d.workspace === c.workspace && d.status !== "deleting").map((d) => d.id);
    const other = domains.filter((id) => !original.sending_domains.includes(id)).slice(0, 1);
    updateCampaign(f.world, f.account, c, { ...original, daily_email_limit: 99, sending_domains: other } as never);
    await cycle(f, "leads");
    updateCampaign(f.world, f.account, c, { ...original, daily_email_limit: 5 } as never);
    updateCampaign(f.world, f.account, c, { ...original } as never);
    await cycle(f, "leads");
    await runDiscovery(f.context());
    const h = (await f.warehouse.db.selectFrom("campaign_history").select(["status", "valid_from", "valid_to", "settings"]).where("campaign_uid", "=", c.uid).orderBy("valid_from").execute()).filter((r) => (r.settings as { daily_email_limit: unknown }).daily_email_limit !== null);
    expect(h.map((r) => [(r.settings as { daily_email_limit: number }).daily_email_limit, (r.settings as { sending_domains: number[] }).sending_domains])).toEqual([
      [original.daily_email_limit, [...original.sending_domains].sort((a, b) => a - b)],
      [99, other],
      [original.daily_email_limit, [...original.sending_domains].sort((a, b) => a - b)],
    ]);
    expect(await historyProblems(f)).toEqual([]);
    expect(await problems(f)).toEqual([]);
  }, 120_000);

  it("a complete campaign deleted upstream after its final walks: everything under it soft-deleted", async () => {
    const f = await openWorld("conv_delete_campaign");
    await cycle(f, "all");
    await cycle(f, "all");
    await cycle(f, "all");
    const c = f.account.campaigns.items.find((x) => x.status === "complete" && x.leads.items.length > 0)!;
    removeCampaign(f.account, c);
    await cycle(f, "events");
    await cycle(f, "leads");
    for (const table of ["leads", "schedules", "replies", "link_clicks", "email_opens", "email_sequences", "campaign_sending_domains", "campaigns"] as const) {
      const col = table === "campaigns" ? "uid" : "campaign_uid";
      const live = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where ${sql.ref(col)} = ${c.uid} and _deleted_at is null`.execute(f.warehouse.db);
      expect({ table, live: live.rows[0]!.n }).toEqual({ table, live: 0 });
    }
    expect(await problems(f)).toEqual([]);
  }, 120_000);

  it("domains: setup, warm-up and the deleting domain over two simulated days; history contiguous, one row per state", async () => {
    const f = await openWorld("conv_domains");
    await cycle(f, "all");
    for (let i = 0; i < 6; i++) {
      advance(f.world, 8 * 3600);
      await runDiscovery(f.context());
    }
    const up = f.account.domains.items.map((d) => ({ id: d.id, status: d.status, setup: d.setupComplete, wr: d.warmupDaysRemaining, wa: d.warmupActiveDays })).sort((a, b) => a.id - b.id);
    const held = (await sql<{ id: number; status: string; setup: boolean; wr: number; wa: number }>`select id::int as id, status, setup_complete as setup, warmup_days_remaining as wr, warmup_active_days as wa from domains where _deleted_at is null order by id`.execute(f.warehouse.db)).rows;
    expect(held).toEqual(up);
    const hist = (await sql<{ domain_id: number; valid_from: Date; valid_to: Date | null; status: string; setup_complete: boolean; warmup_days_remaining: number; warmup_active_days: number }>`select domain_id::int as domain_id, valid_from, valid_to, status, setup_complete, warmup_days_remaining, warmup_active_days from domain_history order by domain_id, valid_from`.execute(f.warehouse.db)).rows;
    const bad: string[] = [];
    for (let i = 0; i + 1 < hist.length; i++) {
      const a = hist[i]!, b = hist[i + 1]!;
      if (a.domain_id !== b.domain_id) continue;
      if (a.valid_to?.getTime() !== b.valid_from.getTime()) bad.push(`${a.domain_id} gap`);
      if (a.status === b.status && a.setup_complete === b.setup_complete && a.warmup_days_remaining === b.warmup_days_remaining && a.warmup_active_days === b.warmup_active_days) bad.push(`${a.domain_id} dup`);
    }
    expect(bad).toEqual([]);
    // workspace history likewise
    const ws = (await sql<{ workspace_id: number; valid_from: Date; valid_to: Date | null }>`select workspace_id::int as workspace_id, valid_from, valid_to from workspace_history order by workspace_id, valid_from`.execute(f.warehouse.db)).rows;
    for (let i = 0; i + 1 < ws.length; i++) if (ws[i]!.workspace_id === ws[i + 1]!.workspace_id && ws[i]!.valid_to?.getTime() !== ws[i + 1]!.valid_from.getTime()) bad.push(`ws ${ws[i]!.workspace_id} gap`);
    expect(bad).toEqual([]);
    const upWs = f.account.workspaces.items.map((w) => ({ id: w.id, credits: w.creditsRemaining, sent: w.totalEmailsSent, replies: w.totalRepliesReceived })).sort((a, b) => a.id - b.id);
    const heldWs = (await sql`select id::int as id, credits_remaining as credits, total_emails_sent as sent, total_replies_received as replies from workspaces where _deleted_at is null order by id`.execute(f.warehouse.db)).rows;
    expect(heldWs).toEqual(upWs);
    expect((await problems(f)).filter((line) => line.c === null)).toEqual([]);
  }, 120_000);
});
