import type { IncomingMessage, ServerResponse } from "node:http";
import type { Campaign, EmailOpenEvent, EmailSequence, Lead, LinkClickEvent, Reply, Workspace } from "../../src/upstream/resources.ts";
import { sendJson, startLocalServer, type LocalServer } from "../upstream/support.ts";

/**
 * A small upstream whose records a test holds and changes between two
 * requests, to replay exact sequences (a lead deleted between page 1 and page
 * 2, a page that comes back empty, a campaign that completes after a failed
 * walk). It serves the same paths and shapes as the real API, over HTTP.
 */

export interface ScriptedState {
  workspaces: Workspace[];
  campaigns: Campaign[];
  leads: Map<string, Lead[]>;
  replies: Map<string, Reply[]>;
  clicks: Map<string, LinkClickEvent[]>;
  opens: Map<string, EmailOpenEvent[]>;
  sequences: Map<number, EmailSequence>;
}

/** A request as a hook sees it: its path, query, and how many requests to that path came before it. */
export interface ScriptedRequest {
  path: string;
  query: URLSearchParams;
  index: number;
}

type Answer = { status: number; body: unknown } | undefined;

/** Called before each answer: change the state (or wait), or return an answer of your own. */
export type ScriptedHook = (request: ScriptedRequest) => Answer | Promise<Answer>;

export interface ScriptedUpstream {
  url: string;
  state: ScriptedState;
  /** Every request, as "path?query". */
  requests: string[];
  hook: ScriptedHook | undefined;
  /** Rewrites the JSON text of every answer: what JSON.stringify cannot write (a number past what a double holds). */
  rewriteText: ((text: string) => string) | undefined;
  close(): Promise<void>;
}

/**
 * Holds every request to `path` until release(), then answers it with `answer` (or as usual): `reached`
 * resolves once the first one has arrived, so a test knows the run it started is waiting there.
 */
export function holdRequests(upstream: ScriptedUpstream, path: string, answer?: () => Answer): { reached: Promise<void>; release(): void } {
  let arrived: () => void = () => undefined;
  const reached = new Promise<void>((resolve) => (arrived = resolve));
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  upstream.hook = async (request) => {
    if (request.path !== path) return undefined;
    arrived();
    await released;
    return answer?.();
  };
  return { reached, release };
}

const AT = "2026-05-01T09:00:00.000Z";

export function buildSequence(id: number): EmailSequence {
  return {
    id,
    subject: `Step ${id}`,
    body: "<p>Hello</p>",
    order: 1,
    next_message_days: 2,
    score: 80,
    verdict: "good",
    suggestions: [],
    label: "passed",
    blocked_reason: "",
    is_flagged_for_approval: false,
    block_approval: false,
    email_content_type: "text/html",
  };
}

export function buildCampaign(uid: string, status: Campaign["status"], sendingDomains: number[] = [1]): Campaign {
  return {
    uid,
    created_on: AT,
    workspace_id: 1,
    scheduled_start_datetime: null,
    settings: {
      name: `Campaign ${uid}`,
      reply_to_address: null,
      daily_email_limit: 50,
      skip_days: [],
      single_subject: false,
      scheduling_strategy: "sequential",
      from_time: "09:00:00",
      to_time: "17:00:00",
      time_zone: "UTC",
      add_unsub_link: false,
      unsub_link_type: "auto",
      custom_unsub_text: "",
      click_tracking_enabled: true,
      open_tracking_enabled: true,
      skip_dangerous_emails: false,
      skip_disposable_emails: false,
      skip_catchall_emails: false,
      skip_full_inbox_emails: false,
      skip_invalid_emails: false,
      forward_negative_emails: false,
      forward_netural_emails: false,
      sending_domains: sendingDomains,
    },
    status,
    bounces: 0,
    campaign_paused: status === "paused",
    campaign_paused_on: null,
    is_generating_schedules: false,
    is_deleting_schedules: false,
    archived: false,
    is_campaign_bounce_blocked: false,
    started_running_at: status === "created" ? null : AT,
    completed_at: status === "complete" ? AT : null,
    cancelled_at: null,
    selected_contact_lists: [],
  };
}

/** A lead with one schedule (id `scheduleId`, sending sequence `sequenceId`), its contact numbered after it. */
export function buildLead(uid: string, scheduleId: number, sequenceId = 1, sentOn: string | null = null): Lead {
  return {
    uid,
    contact: { id: scheduleId + 1_000_000, email_id: `${uid}@example.com`, bounced: false, unsubscribed: false },
    schedules: [
      {
        id: scheduleId,
        email_data: { id: sequenceId, subject: `Step ${sequenceId}`, body: "<p>Hello</p>", email_content_type: "text/html" },
        link_click_events: [],
        replies: [],
        status: sentOn === null ? "created" : "sent",
        schedule_datetime: AT,
        sent_on: sentOn,
        reply_received: false,
        email_opened: false,
        email_opened_on: null,
        email_open_count: 0,
      },
    ],
    sender_email_address: "sender@example.com",
    sender_name: "Sender",
  };
}

export function emptyState(): ScriptedState {
  return {
    workspaces: [
      {
        id: 1,
        created_on: AT,
        subscription_plan: "growth",
        name: "Main",
        credits_remaining: 100,
        next_renewal_date: AT,
        billing_period: "monthly",
        time_zone: "UTC",
        total_emails_sent: 0,
        total_replies_received: 0,
      },
    ],
    campaigns: [],
    leads: new Map(),
    replies: new Map(),
    clicks: new Map(),
    opens: new Map(),
    sequences: new Map(),
  };
}

function page<T>(records: readonly T[], query: URLSearchParams) {
  const offset = Number(query.get("offset") ?? 0);
  const limit = Number(query.get("limit") ?? 10);
  return { data: records.slice(offset, offset + limit), total: records.length };
}

function answer(state: ScriptedState, path: string, query: URLSearchParams): { status: number; body: unknown } {
  const campaignUid = query.get("campaign_uid") ?? "";
  const notFound = { status: 404, body: { message: "not found" } };
  switch (path) {
    case "/api/v1/workspaces/":
      return { status: 200, body: state.workspaces };
    case "/api/v1/domains/":
    case "/api/v1/contacts/":
      return { status: 200, body: page([], query) };
    case "/api/v1/campaigns/":
      return {
        status: 200,
        body: page(
          state.campaigns.map((campaign) => ({ uid: campaign.uid, name: campaign.settings.name, workspace_id: 1, created_on: campaign.created_on, status: campaign.status })),
          query,
        ),
      };
    case "/api/v1/campaign/": {
      const campaign = state.campaigns.find((candidate) => candidate.uid === campaignUid);
      return campaign ? { status: 200, body: campaign } : notFound;
    }
    case "/api/v1/leads/":
      return { status: 200, body: page(state.leads.get(campaignUid) ?? [], query) };
    case "/api/v1/lead/": {
      const uid = query.get("lead_uid");
      const lead = [...state.leads.values()].flat().find((candidate) => candidate.uid === uid);
      return lead ? { status: 200, body: lead } : notFound;
    }
    case "/api/v1/replies/":
      return { status: 200, body: state.replies.get(campaignUid) ?? [] };
    case "/api/v1/campaign/link-click-events/":
      return { status: 200, body: page(state.clicks.get(campaignUid) ?? [], query) };
    case "/api/v1/campaign/email-open-events/":
      return { status: 200, body: page(state.opens.get(campaignUid) ?? [], query) };
    case "/api/v1/email-sequence/": {
      const sequence = state.sequences.get(Number(query.get("id")));
      return sequence ? { status: 200, body: sequence } : notFound;
    }
    default:
      return notFound;
  }
}

export async function startScriptedUpstream(state: ScriptedState = emptyState()): Promise<ScriptedUpstream> {
  const counts = new Map<string, number>();
  const requests: string[] = [];
  const upstream: Omit<ScriptedUpstream, "url" | "close"> = { state, requests, hook: undefined, rewriteText: undefined };
  const server: LocalServer = await startLocalServer((request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? "/", "http://scripted");
    const index = counts.get(url.pathname) ?? 0;
    counts.set(url.pathname, index + 1);
    requests.push(`${url.pathname}?${url.searchParams.toString()}`);
    void (async () => {
      const scripted = await upstream.hook?.({ path: url.pathname, query: url.searchParams, index });
      const { status, body } = scripted ?? answer(state, url.pathname, url.searchParams);
      sendJson(response, status, body, upstream.rewriteText);
    })();
  });
  return Object.assign(upstream, { url: server.url, close: server.close });
}
