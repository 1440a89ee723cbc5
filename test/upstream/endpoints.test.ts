import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UpstreamClient, UpstreamError } from "../../src/upstream/client.ts";
import type { UpdateData } from "../../src/upstream/requests.ts";
import type { Campaign, CampaignListItem, Lead } from "../../src/upstream/resources.ts";
import { useEmulator } from "../support/emulator.ts";
import { rejectionOf } from "./support.ts";
import { sorted, walkAccount } from "./walk.ts";

/** Every endpoint of spec section 4 through the client, against the emulator on a real socket. */

const KEY = "client-endpoints";
const emulator = useEmulator({ apiKeys: [KEY], seed: 41, admin: true });
let client: UpstreamClient;

beforeAll(() => {
  client = new UpstreamClient({ baseUrl: emulator().url, apiKey: KEY, requestsPerSecond: 1_000 });
});

afterAll(async () => {
  await client.close();
});

/** The emulator serves clean records, so each one read is exactly its schema's type. */
function clean<T>(record: { value: unknown; issues: readonly unknown[] }): T {
  expect(record.issues).toEqual([]);
  return record.value as T;
}

async function all<T>(pages: AsyncGenerator<{ records: { value: unknown; issues: readonly unknown[] }[]; rejected: unknown[] }>): Promise<T[]> {
  const records: T[] = [];
  for await (const page of pages) {
    expect(page.rejected).toEqual([]);
    records.push(...page.records.map((record) => clean<T>(record)));
  }
  return records;
}

async function campaigns(): Promise<CampaignListItem[]> {
  return all<CampaignListItem>(client.pages("campaigns", {}));
}

/** Distinct email sequences the campaign's schedules point at. */
function sequenceIdsOf(leads: Lead[]): Set<number> {
  return new Set(leads.flatMap((lead) => lead.schedules.map((schedule) => schedule.email_data.id)));
}

function updateDataFor(campaign: Campaign, sequences: number): UpdateData {
  const { settings } = campaign;
  return {
    name: `${settings.name} (edited)`,
    reply_to_address: null,
    daily_email_limit: 37,
    skip_days: settings.skip_days,
    single_subject: settings.single_subject,
    scheduling_strategy: sequences === 1 ? "single-message" : "sequential",
    from_time: "08:00:00",
    to_time: "16:00:00",
    time_zone: "Europe/Berlin",
    add_unsub_link: true,
    unsub_link_type: "auto",
    custom_unsub_text: "",
    click_tracking_enabled: settings.click_tracking_enabled,
    open_tracking_enabled: settings.open_tracking_enabled,
    skip_dangerous_emails: settings.skip_dangerous_emails,
    skip_disposable_emails: settings.skip_disposable_emails,
    skip_catchall_emails: settings.skip_catchall_emails,
    skip_full_inbox_emails: settings.skip_full_inbox_emails,
    skip_invalid_emails: settings.skip_invalid_emails,
    forward_negative_emails: settings.forward_negative_emails,
    forward_netural_emails: settings.forward_netural_emails,
    sending_domains: settings.sending_domains,
  };
}

describe("reads", () => {
  it("a walk of every listing sees exactly the ground truth, with nothing rejected", async () => {
    const walk = await walkAccount(client);
    const truth = emulator().truth(KEY).keys;

    expect(walk).toMatchObject({ rejected: 0, rewalks: 0 });
    for (const [entity, keys] of Object.entries(walk.settled)) {
      expect(sorted(keys), entity).toEqual(sorted(truth[entity as keyof typeof truth]));
    }
    expect(walk.settled.campaigns.length).toBeGreaterThan(1);
    expect(walk.settled.link_clicks.length).toBeGreaterThan(0);
  });

  it("reads workspaces as a bare array and as an envelope", async () => {
    const truth = sorted(emulator().truth(KEY).keys.workspaces);
    emulator().settings.workspaces = "bare";
    const bare = await client.listWorkspaces();
    emulator().settings.workspaces = "envelope";
    const enveloped = await client.listWorkspaces();
    emulator().settings.workspaces = "bare";

    expect(sorted(bare.records.map((workspace) => String(workspace.value.id)))).toEqual(truth);
    expect(enveloped.records).toEqual(bare.records);
  });

  it("filters workspace listings by workspace_id and pages with an explicit limit", async () => {
    const workspaces = (await client.listWorkspaces()).records.map((record) => record.value);
    expect(workspaces.length).toBeGreaterThan(0);
    const perWorkspace = await Promise.all(
      workspaces.map(async (workspace) => {
        const domains = await all<{ workspace_id: number }>(client.pages("domains", { workspaceId: workspace.id }));
        const lists = await all<{ workspace_id: number }>(client.pages("contact_lists", { workspaceId: workspace.id }));
        const items = await all<{ workspace_id: number }>(client.pages("campaigns", { workspaceId: workspace.id }));
        // The seed gives every workspace sending domains and contact lists; its campaigns may all sit elsewhere.
        expect(domains.length).toBeGreaterThan(0);
        expect(lists.length).toBeGreaterThan(0);
        for (const record of [...domains, ...lists, ...items]) expect(record.workspace_id).toBe(workspace.id);
        return items.length;
      }),
    );
    const small = await client.page("campaigns", { offset: 1, limit: 2 });

    expect(perWorkspace.reduce((sum, count) => sum + count, 0)).toBe((await campaigns()).length);
    expect(small.records).toHaveLength(2);
    expect(small).toMatchObject({ offset: 1, limit: 2, total: (await campaigns()).length });
  });

  it("gets a campaign, a lead and an email sequence as the listings show them", async () => {
    const running = (await campaigns()).find((item) => item.status === "running");
    if (!running) throw new Error("the seed has no running campaign");
    const leads = await all<Lead>(client.pages("leads", { campaignUid: running.uid }));
    const [first] = leads;
    if (!first) throw new Error("the running campaign has no leads");
    const [sequenceId] = sequenceIdsOf(leads);

    const campaign = clean<Campaign>((await client.getCampaign(running.uid)).record);
    const lead = clean<Lead>((await client.getLead(first.uid)).record);
    const sequence = clean<{ id: number }>((await client.getEmailSequence(sequenceId ?? -1)).record);
    const replies = (await client.listReplies(running.uid)).records.map((record) => clean<{ schedule_id: number }>(record));

    expect(campaign).toMatchObject({ uid: running.uid, status: "running", workspace_id: running.workspace_id });
    expect(campaign.settings.name).toBe(running.name);
    expect(lead).toEqual(first);
    expect(sequence.id).toBe(sequenceId);
    const scheduleIds = new Set(leads.flatMap((record) => record.schedules.map((schedule) => schedule.id)));
    expect(replies.length).toBeGreaterThan(0);
    for (const reply of replies) expect(scheduleIds.has(reply.schedule_id)).toBe(true);
  });
});

describe("writes", () => {
  let uid: string;
  let sequences: number;

  beforeAll(async () => {
    for (const item of (await campaigns()).filter((candidate) => candidate.status === "created")) {
      const count = sequenceIdsOf(await all<Lead>(client.pages("leads", { campaignUid: item.uid }))).size;
      if (count >= 1) {
        uid = item.uid;
        sequences = count;
        return;
      }
    }
    throw new Error("the seed has no created campaign with an email sequence");
  });

  it("creates, gets and deletes an email sequence of a created campaign", async () => {
    const created = await client.createEmailSequence(uid, { order: 9, subject: "One more thing", body: "<p>Hello again</p>", next_message_days: 3 });

    expect(created).toMatchObject({ order: 9, subject: "One more thing", next_message_days: 3, email_content_type: "text/html" });
    expect((await client.getEmailSequence(created.id)).record.value).toEqual(created);
    expect(await client.deleteEmailSequence(created.id)).toEqual(expect.any(String));
    const gone = await rejectionOf(client.getEmailSequence(created.id));
    expect(gone).toMatchObject({ status: 404, retryable: false, attempts: 1 });
  });

  it("updates a created campaign's settings", async () => {
    const before = clean<Campaign>((await client.getCampaign(uid)).record);
    const data = updateDataFor(before, sequences);

    const updated = await client.updateCampaign(uid, data);

    expect(updated.settings).toMatchObject({ name: data.name, daily_email_limit: 37, time_zone: "Europe/Berlin", from_time: "08:00:00" });
    expect((await client.getCampaign(uid)).record.value).toEqual(updated);
  });

  it("starts, pauses, resumes and cancels the campaign", async () => {
    const steps: [string, () => Promise<string>, Campaign["status"]][] = [
      ["start", () => client.startCampaign(uid), "running"],
      ["pause", () => client.pauseCampaign(uid), "paused"],
      ["resume", () => client.resumeCampaign(uid), "running"],
      ["cancel", () => client.cancelCampaign(uid), "cancelled"],
    ];
    for (const [operation, act, status] of steps) {
      expect(await act(), operation).toEqual(expect.any(String));
      expect((await client.getCampaign(uid)).record.value.status, operation).toBe(status);
    }
  });
});

describe("errors that are not retried", () => {
  async function failsOnce(call: (upstream: UpstreamClient) => Promise<unknown>, upstream = client): Promise<UpstreamError> {
    const before = upstream.stats;
    const error = await rejectionOf(call(upstream));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(upstream.stats.requests - before.requests).toBe(1);
    expect(upstream.stats.retries - before.retries).toBe(0);
    expect(error).toMatchObject({ retryable: false, attempts: 1 });
    return error as UpstreamError;
  }

  it("400 for a limit outside 1..100", async () => {
    const error = await failsOnce((upstream) => upstream.page("campaigns", { offset: 0, limit: 0 }));
    expect(error.status).toBe(400);
    expect(error.upstreamMessage).toMatch(/limit/);
  });

  it("401 for an unknown key", async () => {
    const stranger = new UpstreamClient({ baseUrl: emulator().url, apiKey: "not-a-key" });
    try {
      expect((await failsOnce((upstream) => upstream.listWorkspaces(), stranger)).status).toBe(401);
    } finally {
      await stranger.close();
    }
  });

  it("404 for an unknown campaign", async () => {
    expect((await failsOnce((upstream) => upstream.getCampaign("no-such-campaign"))).status).toBe(404);
  });

  it("409 for a lifecycle step the campaign's state does not allow", async () => {
    const cancelled = (await campaigns()).find((item) => item.status === "cancelled" || item.status === "complete");
    if (!cancelled) throw new Error("the seed has no terminal campaign");
    expect((await failsOnce((upstream) => upstream.pauseCampaign(cancelled.uid))).status).toBe(409);
  });
});
