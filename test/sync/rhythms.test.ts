import { describe, expect, it } from "vitest";
import { REFRESH_LIMIT } from "../../src/sync/campaign-sync.ts";
import { runCampaignSync, runFullSync } from "../../src/sync/runs.ts";
import type { Lead, Reply } from "../../src/upstream/resources.ts";
import { useTestDatabase } from "../support/database.ts";
import { replyArrives, useScriptedCampaigns, type ScriptedCampaign } from "../support/scripted-campaign.ts";
import { holdRequests } from "../support/scripted-upstream.ts";

/**
 * A campaign's two rhythms (issue 12): events read from their tails every
 * minute with the touched leads refreshed, leads walked on their own cadence,
 * nothing requested where nothing can happen.
 */

const databaseUrl = useTestDatabase("rhythms");
const CAMPAIGN = "cmp_rhythms";
const EVENT_PATHS = ["/api/v1/replies/", "/api/v1/campaign/link-click-events/", "/api/v1/campaign/email-open-events/"];
const scripted = useScriptedCampaigns(databaseUrl, CAMPAIGN);
type Harness = ScriptedCampaign;

/** The campaign with `leads` leads, each sent once when it is running; synced as the worker does. */
async function harness(status: "created" | "running", leads = 5): Promise<Harness> {
  const made = await scripted({ status, leads, sentOn: status === "running" ? "2026-05-01T10:00:00.000Z" : null });
  return { ...made, context: (overrides = {}) => made.context({ trigger: "worker", locks: made.warehouse.locks, ...overrides }) };
}

describe("the events rhythm", () => {
  it("requests nothing for a campaign that never started, and lists its events on the first cycle after it starts", async () => {
    const h = await harness("created");
    await runCampaignSync(h.context(), CAMPAIGN, "leads");
    h.requested();
    expect((await runCampaignSync(h.context(), CAMPAIGN, "events")).outcome).toBe("succeeded");
    expect(h.requested()).toEqual([]);

    const campaign = h.upstream.state.campaigns[0] as { status: string; started_running_at: string | null };
    Object.assign(campaign, { status: "running", started_running_at: "2026-05-01T09:00:00.000Z" });
    await runCampaignSync(h.context(), CAMPAIGN, "leads");
    h.requested();
    await runCampaignSync(h.context(), CAMPAIGN, "events");
    expect(h.requested()).toEqual(EVENT_PATHS);
  });

  it("costs one request per event listing when nothing happened, and the leads rhythm its detail, pages and sequences", async () => {
    const h = await harness("running");
    await runCampaignSync(h.context(), CAMPAIGN, "all");
    h.requested();
    await runCampaignSync(h.context(), CAMPAIGN, "events");
    expect(h.requested()).toEqual(EVENT_PATHS);
    await runCampaignSync(h.context(), CAMPAIGN, "leads");
    expect(h.requested()).toEqual(["/api/v1/campaign/", "/api/v1/leads/", "/api/v1/email-sequence/"]);
  });

  it("lands a reply that arrived between two leads walks, and its schedule's flag, without walking the leads", async () => {
    const h = await harness("running");
    await runCampaignSync(h.context(), CAMPAIGN, "all");
    h.requested();
    replyArrives(h, CAMPAIGN, 2, 7001);

    expect((await runCampaignSync(h.context(), CAMPAIGN, "events")).outcome).toBe("succeeded");
    expect(h.requested()).toEqual([...EVENT_PATHS, "/api/v1/lead/"]);
    const db = h.warehouse.db;
    expect(await db.selectFrom("replies").select(["id", "reply_classification"]).execute()).toEqual([{ id: 7001, reply_classification: "positive" }]);
    expect(await db.selectFrom("schedules").select("reply_received").where("id", "=", 1003).executeTakeFirstOrThrow()).toEqual({ reply_received: true });
  });

  it("asks for no lead the walk has just read with its events", async () => {
    const h = await harness("running");
    replyArrives(h, CAMPAIGN, 1, 7002);
    await runCampaignSync(h.context(), CAMPAIGN, "all");
    expect(h.requested().filter((path) => path === "/api/v1/lead/")).toEqual([]);
    expect(await h.warehouse.db.selectFrom("schedules").select("reply_received").where("id", "=", 1002).executeTakeFirstOrThrow()).toEqual({ reply_received: true });
  });

  it("soft-deletes a lead the refresh finds gone, with its schedules, their events and its contact", async () => {
    const h = await harness("running");
    await runCampaignSync(h.context(), CAMPAIGN, "all");
    replyArrives(h, CAMPAIGN, 1, 7003);
    h.upstream.hook = ({ path, query }) => (path === "/api/v1/lead/" && query.get("lead_uid") === "L2" ? { status: 404, body: { message: "no such lead" } } : undefined);

    expect((await runCampaignSync(h.context(), CAMPAIGN, "events")).outcome).toBe("succeeded");
    const db = h.warehouse.db;
    const gone = async (table: "leads" | "schedules" | "replies" | "contacts", column: string, value: string | number) =>
      (await db.selectFrom(table).select("_deleted_at").where(column as never, "=", value as never).executeTakeFirstOrThrow())._deleted_at !== null;
    expect(await gone("leads", "uid", "L2")).toBe(true);
    expect(await gone("schedules", "id", 1002)).toBe(true);
    expect(await gone("replies", "id", 7003)).toBe(true);
    expect(await gone("contacts", "id", 1_001_002)).toBe(true);
    expect(await gone("leads", "uid", "L1")).toBe(false);
    expect(await gone("contacts", "id", 1_001_001)).toBe(false);
  });

  it("leaves a reply the replies listing brought back live when a later walk deletes nothing new", async () => {
    const h = await harness("running", 3);
    replyArrives(h, CAMPAIGN, 1, 7005);
    await runCampaignSync(h.context(), CAMPAIGN, "all");
    const lead = h.upstream.state.leads.get(CAMPAIGN)?.[1] as Lead;
    lead.schedules = [];
    await runCampaignSync(h.context(), CAMPAIGN, "leads");
    const replyLive = async () => (await h.warehouse.db.selectFrom("replies").select("_deleted_at").where("id", "=", 7005).executeTakeFirstOrThrow())._deleted_at === null;
    expect(await replyLive()).toBe(false);

    await runCampaignSync(h.context(), CAMPAIGN, "events");
    expect(await replyLive()).toBe(true);
    await runCampaignSync(h.context(), CAMPAIGN, "leads");
    expect(await replyLive()).toBe(true);
  });

  it("keeps the leads a failed refresh did not reach, and refreshes them in the next cycle", async () => {
    const h = await harness("running");
    await runCampaignSync(h.context(), CAMPAIGN, "all");
    replyArrives(h, CAMPAIGN, 1, 7004);
    h.upstream.hook = ({ path }) => (path === "/api/v1/lead/" ? { status: 500, body: { message: "down for a moment" } } : undefined);
    expect((await runCampaignSync(h.context(), CAMPAIGN, "events")).outcome).not.toBe("succeeded");
    const flagged = () => h.warehouse.db.selectFrom("schedules").select("reply_received").where("id", "=", 1002).executeTakeFirstOrThrow();
    expect(await flagged()).toEqual({ reply_received: false });

    h.upstream.hook = undefined;
    h.requested();
    expect((await runCampaignSync(h.context(), CAMPAIGN, "events")).outcome).toBe("succeeded");
    expect(h.requested().filter((path) => path === "/api/v1/lead/")).toHaveLength(1);
    expect(await flagged()).toEqual({ reply_received: true });
  });

  it("refreshes, after a stop, the lead whose reply the stopped cycle had already stored behind its cursor", async () => {
    const h = await harness("running");
    await runCampaignSync(h.context(), CAMPAIGN, "all");
    replyArrives(h, CAMPAIGN, 3, 7005);
    const stop = new AbortController();
    h.upstream.hook = ({ path }) => {
      if (path === EVENT_PATHS[1]) stop.abort();
      return undefined;
    };
    expect((await runCampaignSync(h.context({ signal: stop.signal }), CAMPAIGN, "events")).outcome).toBe("aborted");
    const db = h.warehouse.db;
    expect(await db.selectFrom("replies").select("id").execute()).toEqual([{ id: 7005 }]);
    const flagged = () => db.selectFrom("schedules").select("reply_received").where("id", "=", 1004).executeTakeFirstOrThrow();
    expect(await flagged()).toEqual({ reply_received: false });

    h.upstream.hook = undefined;
    h.requested();
    expect((await runCampaignSync(h.context(), CAMPAIGN, "events")).outcome).toBe("succeeded");
    expect(h.requested()).toEqual([...EVENT_PATHS, "/api/v1/lead/"]);
    expect(await flagged()).toEqual({ reply_received: true });
  });

  it(`refreshes at most ${REFRESH_LIMIT} touched leads a cycle, and the rest first in the next`, async () => {
    const h = await harness("running", REFRESH_LIMIT + 5);
    await runCampaignSync(h.context(), CAMPAIGN, "all");
    h.requested();
    for (let index = 0; index < REFRESH_LIMIT + 5; index += 1) replyArrives(h, CAMPAIGN, index, 8000 + index);
    await runCampaignSync(h.context(), CAMPAIGN, "events");
    expect(h.requested().filter((path) => path === "/api/v1/lead/")).toHaveLength(REFRESH_LIMIT);
    await runCampaignSync(h.context(), CAMPAIGN, "events");
    expect(h.requested().filter((path) => path === "/api/v1/lead/")).toHaveLength(5);
    const flagged = await h.warehouse.db.selectFrom("schedules").select("id").where("reply_received", "=", true).execute();
    expect(flagged).toHaveLength(REFRESH_LIMIT + 5);
    await runCampaignSync(h.context(), CAMPAIGN, "events");
    expect(h.requested()).toEqual(EVENT_PATHS);
  });
});

describe("the two rhythms of one campaign", () => {
  it("run side by side without regressing a row: a leads page read before a refresh but written after it keeps the reply", async () => {
    const h = await harness("running", 3);
    await runCampaignSync(h.context(), CAMPAIGN, "all");
    // The leads walk reads its page now, before the reply arrives, and writes it only once the events cycle is done.
    const stalePage = JSON.parse(JSON.stringify({ data: h.upstream.state.leads.get(CAMPAIGN), total: 3 })) as unknown;
    const { reached, release: releaseWalk } = holdRequests(h.upstream, "/api/v1/leads/", () => ({ status: 200, body: stalePage }));
    const walk = runCampaignSync(h.context(), CAMPAIGN, "leads");
    await reached;
    replyArrives(h, CAMPAIGN, 0, 7101);
    expect((await runCampaignSync(h.context(), CAMPAIGN, "events")).outcome).toBe("succeeded");
    releaseWalk();
    expect((await walk).outcome).toBe("succeeded");

    const db = h.warehouse.db;
    expect(await db.selectFrom("schedules").select("reply_received").where("id", "=", 1001).executeTakeFirstOrThrow()).toEqual({ reply_received: true });
    expect(await db.selectFrom("replies").select("id").where("_deleted_at", "is", null).execute()).toEqual([{ id: 7101 }]);
    const runs = await db.selectFrom("sync_runs").select(["rhythm", "outcome"]).where("rhythm", "is not", null).orderBy("id").execute();
    expect(runs).toEqual([
      { rhythm: "leads", outcome: "succeeded" },
      { rhythm: "events", outcome: "succeeded" },
    ]);
  });
});

describe("a leads page read before the events rhythm's reply listing, written after it", () => {
  it("leaves the classification the listing read, and brings the reply's lead", async () => {
    const h = await harness("running", 3);
    replyArrives(h, CAMPAIGN, 0, 7111);
    await runCampaignSync(h.context(), CAMPAIGN, "all");
    const stalePage = JSON.parse(JSON.stringify({ data: h.upstream.state.leads.get(CAMPAIGN), total: 3 })) as unknown;
    const { reached, release: releaseWalk } = holdRequests(h.upstream, "/api/v1/leads/", () => ({ status: 200, body: stalePage }));
    const walk = runCampaignSync(h.context(), CAMPAIGN, "leads");
    await reached;
    // The upstream classifies the reply again; the events cycle reads it from the listing while the page is in flight.
    const listed = h.upstream.state.replies.get(CAMPAIGN)?.find((reply) => reply.id === 7111) as Reply;
    listed.reply_classification = "negative";
    expect((await runCampaignSync(h.context(), CAMPAIGN, "events")).outcome).toBe("succeeded");
    releaseWalk();
    expect((await walk).outcome).toBe("succeeded");

    const reply = await h.warehouse.db.selectFrom("replies").select(["reply_classification", "lead_uid", "mail_from"]).where("id", "=", 7111).executeTakeFirstOrThrow();
    expect(reply).toEqual({ reply_classification: "negative", lead_uid: "L1", mail_from: "L1@example.com" });
  });
});

describe("a terminal campaign past its final walks", () => {
  it("has its leads walked again once COLDSYNC_TERMINAL_REWALK_EVERY has passed since the last walk, and only then", async () => {
    const h = await scripted({ status: "complete", leads: 3, sentOn: "2026-05-01T09:00:00.000Z" });
    for (let walk = 0; walk < 2; walk += 1) expect((await runCampaignSync(h.context(), CAMPAIGN, "all")).outcome).toBe("succeeded");
    // A contact unsubscribes after the campaign ended: no open, click or reply comes with it.
    const [first] = h.upstream.state.leads.get(CAMPAIGN) as Lead[];
    (first as Lead).contact.unsubscribed = true;
    const unsubscribed = async () =>
      (await h.warehouse.db.selectFrom("contacts").select("unsubscribed").where("id", "=", (first as Lead).contact.id).executeTakeFirstOrThrow()).unsubscribed;

    h.requested();
    expect((await runCampaignSync(h.context({ terminalRewalkEveryMs: 3_600_000 }), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    expect(h.requested()).toEqual(["/api/v1/campaign/"]);
    expect(await unsubscribed()).toBe(false);

    expect((await runCampaignSync(h.context({ terminalRewalkEveryMs: 1 }), CAMPAIGN, "leads")).outcome).toBe("succeeded");
    expect(h.requested()).toContain("/api/v1/leads/");
    expect(await unsubscribed()).toBe(true);
  });
});

describe("the refresh's rejected records", () => {
  /** A terminal campaign past its final walks: its leads are read only by the events rhythm's refresh (#12) now. */
  async function terminal(): Promise<Harness> {
    const h = await scripted({ status: "complete", leads: 3, sentOn: "2026-05-01T09:00:00.000Z" });
    for (let walk = 0; walk < 2; walk += 1) expect((await runCampaignSync(h.context(), CAMPAIGN, "all")).outcome).toBe("succeeded");
    return h;
  }

  /** The refresh (#12) answers `broken(lead)` for any lead it asks for, until it is mended. */
  function refreshAnswers(h: Harness, broken: (lead: Lead) => unknown): { mend(): void } {
    let mended = false;
    h.upstream.hook = ({ path, query }) => {
      if (path !== "/api/v1/lead/" || mended) return undefined;
      const lead = h.upstream.state.leads.get(CAMPAIGN)?.find((candidate) => candidate.uid === query.get("lead_uid")) as Lead;
      return { status: 200, body: broken(structuredClone(lead)) };
    };
    return { mend: () => (mended = true) };
  }

  const rejectedRows = (h: Harness) => h.warehouse.db.selectFrom("rejected_records").select(["stream", "record_key", "parent_key", "resolved_at"]).execute();

  it("resolves the refresh's answer that could not be placed once a refresh reads the lead clean again", async () => {
    const h = await terminal();
    const refresh = refreshAnswers(h, ({ uid: _uid, ...withoutUid }) => withoutUid);
    replyArrives(h, CAMPAIGN, 0, 7201);
    expect((await runCampaignSync(h.context(), CAMPAIGN, "events")).outcome).toBe("partial");
    expect(await rejectedRows(h)).toEqual([{ stream: "leads", record_key: "requested=L1", parent_key: null, resolved_at: null }]);

    refresh.mend();
    replyArrives(h, CAMPAIGN, 0, 7202);
    h.requested();
    expect((await runCampaignSync(h.context(), CAMPAIGN, "events")).outcome).toBe("succeeded");
    expect(h.requested()).toContain("/api/v1/lead/");
    // No other read of the terminal campaign's leads settles it either.
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    expect((await rejectedRows(h))[0]?.resolved_at).toBeInstanceOf(Date);
  });

  it("keeps the answer of a lead the next refresh does not ask for: a refresh names only the leads due now", async () => {
    const h = await terminal();
    refreshAnswers(h, ({ uid: _uid, ...withoutUid }) => withoutUid);
    replyArrives(h, CAMPAIGN, 0, 7205);
    expect((await runCampaignSync(h.context(), CAMPAIGN, "events")).outcome).toBe("partial");
    h.upstream.hook = undefined;
    replyArrives(h, CAMPAIGN, 1, 7206);
    expect((await runCampaignSync(h.context(), CAMPAIGN, "events")).outcome).toBe("succeeded");
    expect(h.upstream.requests.filter((request) => request.startsWith("/api/v1/lead/")).at(-1)).toContain("lead_uid=L2");
    expect(await rejectedRows(h)).toEqual([{ stream: "leads", record_key: "requested=L1", parent_key: null, resolved_at: null }]);
  });

  it("resolves a part of the refreshed lead that could not be placed once a refresh reads the lead without it", async () => {
    const h = await terminal();
    const refresh = refreshAnswers(h, (lead) => ({ ...lead, contact: { ...lead.contact, id: null } }));
    replyArrives(h, CAMPAIGN, 0, 7203);
    expect((await runCampaignSync(h.context(), CAMPAIGN, "events")).outcome).toBe("partial");
    expect(await rejectedRows(h)).toEqual([{ stream: "leads", record_key: null, parent_key: "L1", resolved_at: null }]);

    refresh.mend();
    replyArrives(h, CAMPAIGN, 0, 7204);
    expect((await runCampaignSync(h.context(), CAMPAIGN, "events")).outcome).toBe("succeeded");
    expect((await rejectedRows(h))[0]?.resolved_at).toBeInstanceOf(Date);
  });

  it("resolves a part of the refreshed lead that could not be placed once a refresh finds the lead gone", async () => {
    const h = await terminal();
    refreshAnswers(h, (lead) => ({ ...lead, contact: { ...lead.contact, id: null } }));
    replyArrives(h, CAMPAIGN, 0, 7207);
    expect((await runCampaignSync(h.context(), CAMPAIGN, "events")).outcome).toBe("partial");
    expect(await rejectedRows(h)).toEqual([{ stream: "leads", record_key: null, parent_key: "L1", resolved_at: null }]);

    h.upstream.hook = undefined;
    replyArrives(h, CAMPAIGN, 0, 7208);
    h.upstream.state.leads.set(CAMPAIGN, (h.upstream.state.leads.get(CAMPAIGN) ?? []).filter((lead) => lead.uid !== "L1"));
    expect((await runCampaignSync(h.context(), CAMPAIGN, "events")).outcome).toBe("succeeded");
    expect(await h.warehouse.db.selectFrom("leads").select("_deleted_at").where("uid", "=", "L1").executeTakeFirstOrThrow()).toEqual({ _deleted_at: expect.any(Date) });
    expect((await rejectedRows(h))[0]?.resolved_at).toBeInstanceOf(Date);
  });
});
