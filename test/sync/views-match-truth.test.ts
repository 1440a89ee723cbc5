import { sql, type Kysely } from "kysely";
import { describe, expect, it } from "vitest";
import { applyLifecycle } from "../../src/emulator/operations.ts";
import { advance } from "../../src/emulator/simulate.ts";
import { removeCampaign, removeClick, removeLead, removeOpen } from "../../src/emulator/store/removals.ts";
import type { Account, World } from "../../src/emulator/store/world.ts";
import { runCampaignSync } from "../../src/sync/runs.ts";
import type { Database } from "../../src/warehouse/database.ts";
import { cycle, useWorlds, type WorldFixture } from "../support/world-fixture.ts";

/** The BI views (campaign_funnel, engagement_daily, sequence_step_performance) against numbers computed from the emulator's store. */

/** Per-campaign funnel, daily and per-step numbers computed from the emulator's store (the ground truth). */

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

function truthFunnel(world: World, account: Account) {
  const out: Record<string, Record<string, unknown>> = {};
  for (const c of account.campaigns.items) {
    let sent = 0, opened = 0, clicked = 0, replied = 0;
    const openSched = new Set(c.opens.items.map((o) => o.schedule));
    const clickSched = new Set(c.clicks.items.map((k) => k.schedule));
    const replySched = new Set(c.replies.items.map((r) => r.schedule));
    for (const lead of c.leads.items)
      for (const s of lead.schedules) {
        const isSent = s.sentOn !== null;
        if (isSent) sent++;
        if (isSent && (s.openCount > 0 || openSched.has(s))) opened++;
        if (clickSched.has(s) || (s.clicks?.length ?? 0) > 0) clicked++;
        if (replySched.has(s) || (s.replies?.length ?? 0) > 0) replied++;
      }
    const by = (k: string) => c.replies.items.filter((r) => r.classification === k).length;
    out[c.uid] = {
      status: c.status,
      leads: c.leads.items.length,
      emails_sent: sent,
      opened,
      clicked,
      replied,
      positive_replies: by("positive"),
      neutral_replies: by("neutral"),
      negative_replies: by("negative"),
      bounced: c.bounces,
    };
  }
  return out;
}

async function warehouseFunnel(db: Kysely<Database>) {
  const rows = await sql<Record<string, unknown>>`select * from campaign_funnel`.execute(db);
  const out: Record<string, Record<string, unknown>> = {};
  for (const r of rows.rows) {
    out[r.campaign_uid as string] = {
      status: r.status,
      leads: Number(r.leads),
      emails_sent: Number(r.emails_sent),
      opened: Number(r.opened),
      clicked: Number(r.clicked),
      replied: Number(r.replied),
      positive_replies: Number(r.positive_replies),
      neutral_replies: Number(r.neutral_replies),
      negative_replies: Number(r.negative_replies),
      bounced: r.bounced === null ? null : Number(r.bounced),
    };
  }
  return out;
}

function truthDaily(account: Account) {
  const out: Record<string, { sends: number; opens: number; clicks: number; replies: number }> = {};
  const bump = (uid: string, ms: number, k: "sends" | "opens" | "clicks" | "replies") => {
    const key = `${uid}|${day(ms)}`;
    out[key] ??= { sends: 0, opens: 0, clicks: 0, replies: 0 };
    out[key][k]++;
  };
  for (const c of account.campaigns.items) {
    for (const lead of c.leads.items) for (const s of lead.schedules) if (s.sentOn !== null) bump(c.uid, s.sentOn, "sends");
    for (const o of c.opens.items) bump(c.uid, o.openedOn, "opens");
    for (const k of c.clicks.items) bump(c.uid, k.clickedOn, "clicks");
    for (const r of c.replies.items) bump(c.uid, r.receivedOn, "replies");
  }
  return out;
}

async function warehouseDaily(db: Kysely<Database>) {
  const rows = await sql<{ campaign_uid: string; day: string; sends: string; opens: string; clicks: string; replies: string }>`select campaign_uid, to_char(day, 'YYYY-MM-DD') as day, sends, opens, clicks, replies from engagement_daily`.execute(db);
  const out: Record<string, { sends: number; opens: number; clicks: number; replies: number }> = {};
  for (const r of rows.rows) out[`${r.campaign_uid}|${r.day}`] = { sends: Number(r.sends), opens: Number(r.opens), clicks: Number(r.clicks), replies: Number(r.replies) };
  return out;
}

function truthSteps(account: Account) {
  const out: Record<string, Record<string, number>> = {};
  for (const c of account.campaigns.items) {
    const openSched = new Set(c.opens.items.map((o) => o.schedule));
    const clickSched = new Set(c.clicks.items.map((k) => k.schedule));
    const replySched = new Set(c.replies.items.map((r) => r.schedule));
    const steps = new Map<number, Record<string, number>>();
    for (const lead of c.leads.items)
      for (const s of lead.schedules) {
        const t = steps.get(s.sequence.id) ?? { emails_sent: 0, opened: 0, clicked: 0, replied: 0, positive_replies: 0 };
        steps.set(s.sequence.id, t);
        const isSent = s.sentOn !== null;
        if (isSent) t.emails_sent!++;
        if (isSent && (s.openCount > 0 || openSched.has(s))) t.opened!++;
        if (clickSched.has(s)) t.clicked!++;
        if (replySched.has(s) || (s.replies?.length ?? 0) > 0) t.replied!++;
      }
    for (const r of c.replies.items) if (r.classification === "positive") {
      const t = steps.get(r.schedule.sequence.id);
      if (t) t.positive_replies!++;
    }
    for (const [id, t] of steps) out[`${c.uid}|${id}`] = t;
  }
  return out;
}

async function warehouseSteps(db: Kysely<Database>) {
  const rows = await sql<Record<string, string>>`select campaign_uid, email_sequence_id, emails_sent, opened, clicked, replied, positive_replies from sequence_step_performance`.execute(db);
  const out: Record<string, Record<string, number>> = {};
  for (const r of rows.rows)
    out[`${r.campaign_uid}|${r.email_sequence_id}`] = {
      emails_sent: Number(r.emails_sent),
      opened: Number(r.opened),
      clicked: Number(r.clicked),
      replied: Number(r.replied),
      positive_replies: Number(r.positive_replies),
    };
  return out;
}

/** Keys whose values differ between two maps (missing on either side included). */
function differences<T>(truth: Record<string, T>, held: Record<string, T>) {
  const out: Record<string, { truth: T | undefined; held: T | undefined }> = {};
  for (const key of new Set([...Object.keys(truth), ...Object.keys(held)])) {
    if (JSON.stringify(truth[key]) !== JSON.stringify(held[key])) out[key] = { truth: truth[key], held: held[key] };
  }
  return out;
}

const openWorld = useWorlds("views_match_truth");

async function report(f: WorldFixture) {
  const funnel = differences(truthFunnel(f.world, f.account), await warehouseFunnel(f.warehouse.db));
  const daily = differences(truthDaily(f.account), await warehouseDaily(f.warehouse.db));
  const steps = differences(truthSteps(f.account), await warehouseSteps(f.warehouse.db));
  return { funnel, daily, steps };
}
const clean = { funnel: {}, daily: {}, steps: {} };

describe("views against the emulator's store", () => {
  it("pause, cancel, resume, days of activity, rhythms", async () => {
    const f = await openWorld("views_1");
    await cycle(f, "all");
    expect(await report(f)).toEqual(clean);
    const running = f.account.campaigns.items.filter((c) => c.status === "running");
    applyLifecycle(f.world, running[0]!, "pause");
    if (running[1]) applyLifecycle(f.world, running[1], "cancel");
    advance(f.world, 86_400);
    await cycle(f, "all");
    expect(await report(f)).toEqual(clean);
    applyLifecycle(f.world, running[0]!, "resume");
    advance(f.world, 3 * 86_400);
    await cycle(f, "events");
    await cycle(f, "leads");
    expect(await report(f)).toEqual(clean);
  }, 300_000);

  it("removed leads, opens, clicks and a campaign", async () => {
    const f = await openWorld("views_2");
    await cycle(f, "all");
    const campaigns = f.account.campaigns.items;
    advance(f.world, 86_400);
    const withReplies = campaigns.find((c) => c.status === "running" && c.leads.items.some((l) => l.schedules.some((s) => s.replies)))!;
    removeLead(f.account, withReplies.leads.items.find((l) => l.schedules.some((s) => s.replies))!);
    const withOpens = campaigns.find((c) => c.opens.items.length > 0);
    if (withOpens) removeOpen(withOpens.opens.items[0]!);
    const withClicks = campaigns.find((c) => c.clicks.items.length > 0);
    if (withClicks) removeClick(withClicks.clicks.items[0]!);
    const complete = campaigns.find((c) => c.status === "complete");
    if (complete) removeCampaign(f.account, complete);
    for (let i = 0; i < 2; i++) await cycle(f, "all");
    expect(await report(f)).toEqual(clean);
  }, 300_000);

  it("a lead moved with its events into another started campaign", async () => {
    const f = await openWorld("views_3");
    await cycle(f, "all");
    const a = f.account.campaigns.items.find((c) => c.leads.items.some((l) => l.schedules.some((s) => s.replies && s.clicks)))!;
    const b = f.account.campaigns.items.find((c) => c !== a && c.startedRunningAt !== null && c.sequences.length >= a.sequences.length && c.leads.items.length > 0)!;
    const lead = a.leads.items.find((l) => l.schedules.some((s) => s.replies && s.clicks))!;
    a.leads.remove(lead);
    lead.campaign = b;
    for (const s of lead.schedules) s.sequence = b.sequences[a.sequences.indexOf(s.sequence)] ?? b.sequences[0]!;
    b.leads.push(lead);
    for (const o of a.opens.items.filter((x) => x.schedule.lead === lead)) { a.opens.remove(o); b.opens.push(o); }
    for (const k of a.clicks.items.filter((x) => x.schedule.lead === lead)) { a.clicks.remove(k); b.clicks.push(k); }
    for (const r of a.replies.items.filter((x) => x.schedule.lead === lead)) { a.replies.remove(r); b.replies.push(r); }
    a.sendQueue = null;
    b.sendQueue = null;
    const ctx = f.context({ trigger: "worker" });
    for (const rhythm of ["leads", "events"] as const) for (const x of [a, b]) await runCampaignSync(ctx, x.uid, rhythm);
    expect(await report(f)).toEqual(clean);
  }, 300_000);
});
