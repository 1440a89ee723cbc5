import { afterAll, beforeAll } from "vitest";
import type { z } from "zod";
import { TRUTH_ENTITIES, type EmulatorOptionsInput, type TruthEntity } from "../../src/emulator/options.ts";
import { startEmulator } from "../../src/emulator/server.ts";
import { API_KEY_HEADER, PATHS } from "../../src/upstream/endpoints.ts";
import * as resources from "../../src/upstream/resources.ts";

/**
 * Black-box helpers for the emulator's tests: a running emulator per file, a
 * thin fetch client that never throws on HTTP errors, page walking, and a full
 * read of one account through the public API only.
 */

export type Emulator = Awaited<ReturnType<typeof startEmulator>>;

export function useEmulator(options: EmulatorOptionsInput = {}): () => Emulator {
  let emulator: Emulator | undefined;
  beforeAll(async () => {
    emulator = await startEmulator({ scale: "small", faults: "none", ...options });
  });
  afterAll(async () => {
    await emulator?.close();
  });
  return () => {
    if (!emulator) throw new Error("the emulator runs only inside tests and hooks");
    return emulator;
  };
}

export type Query = Record<string, string | number | undefined>;
export type Fields = [string, string][];
export type RequestBody =
  | { kind: "json"; value: unknown }
  /** Sent byte for byte as given (bytes that are not UTF-8 included). */
  | { kind: "raw"; text: string | Uint8Array; contentType: string }
  | { kind: "form"; fields: Fields }
  | { kind: "multipart"; fields: Fields };
export type Encoding = "json" | "form" | "multipart";

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body, or undefined when it is not JSON. */
  json: unknown;
}

function encode(body: RequestBody): { payload: RequestInit["body"]; contentType?: string } {
  switch (body.kind) {
    case "json":
      return { payload: JSON.stringify(body.value), contentType: "application/json" };
    case "raw":
      return { payload: body.text, contentType: body.contentType };
    case "form":
      return { payload: new URLSearchParams(body.fields) };
    case "multipart": {
      const form = new FormData();
      for (const [name, value] of body.fields) form.append(name, value);
      return { payload: form };
    }
  }
}

/** An answer's JSON, or undefined for a body that is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Nested objects in form bodies travel as bracketed keys; arrays as JSON text (contract A.5). */
export function formFields(top: Record<string, unknown>): Fields {
  const fields: Fields = [];
  const add = (name: string, value: unknown): void => {
    if (value === undefined) return;
    if (value === null) fields.push([name, ""]);
    else if (Array.isArray(value)) fields.push([name, JSON.stringify(value)]);
    else if (typeof value === "object") for (const [key, inner] of Object.entries(value)) add(`${name}[${key}]`, inner);
    else fields.push([name, String(value as string | number | boolean)]);
  };
  for (const [key, value] of Object.entries(top)) add(key, value);
  return fields;
}

export function bodyOf(encoding: Encoding, value: Record<string, unknown>): RequestBody {
  if (encoding === "json") return { kind: "json", value };
  return { kind: encoding, fields: formFields(value) };
}

export class Api {
  constructor(
    readonly baseUrl: string,
    readonly key?: string,
  ) {}

  async request(method: string, path: string, options: { query?: Query; body?: RequestBody; headers?: Record<string, string> } = {}): Promise<Answer> {
    const url = new URL(path, this.baseUrl);
    for (const [name, value] of Object.entries(options.query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
    const headers: Record<string, string> = { ...options.headers };
    if (this.key !== undefined) headers[API_KEY_HEADER] = this.key;
    let payload: RequestInit["body"];
    if (options.body) {
      const encoded = encode(options.body);
      payload = encoded.payload;
      if (encoded.contentType) headers["content-type"] = encoded.contentType;
    }
    const response = await fetch(url, { method, headers, body: payload });
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, json: parseJson(text) };
  }

  get(path: string, query?: Query): Promise<Answer> {
    return this.request("GET", path, { query });
  }

  send(method: string, path: string, body: RequestBody, query?: Query): Promise<Answer> {
    return this.request(method, path, { body, query });
  }

  /** GET that must answer 200; the body is parsed with `schema`. */
  async ok<S extends z.ZodType>(path: string, query: Query, schema: S): Promise<z.infer<S>> {
    const answer = await this.get(path, query);
    if (answer.status !== 200) throw new Error(`GET ${path} ${JSON.stringify(query)} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
    return parseStrict(schema, answer.json, `GET ${path}`);
  }

  page(path: string, query: Query): Promise<{ data: unknown[]; total: number }> {
    return this.ok(path, query, resources.pageEnvelope);
  }

  /** Every record of a paginated listing, each parsed with `schema`; the total must not move meanwhile. */
  async walk<S extends z.ZodType>(path: string, query: Query, schema: S, limit = 100): Promise<{ records: z.infer<S>[]; total: number }> {
    const records: z.infer<S>[] = [];
    let total: number | undefined;
    for (let offset = 0; total === undefined || offset < total; offset += limit) {
      const page = await this.page(path, { ...query, limit, offset });
      if (total !== undefined && page.total !== total) throw new Error(`${path}: total moved from ${total} to ${page.total} while paging`);
      total = page.total;
      if (page.data.length === 0) break;
      records.push(...page.data.map((record, index) => parseStrict(schema, record, `${path} record ${offset + index}`)));
    }
    return { records, total: total ?? 0 };
  }
}

export function parseStrict<S extends z.ZodType>(schema: S, value: unknown, label: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new Error(`${label} does not match its schema: ${JSON.stringify(result.error.issues.slice(0, 3))} in ${JSON.stringify(value).slice(0, 400)}`);
  return result.data;
}

/** The `message` of an error answer; fails the test when the body is not `{message: string}`. */
export function messageOf(answer: Answer): string {
  return parseStrict(resources.messageBody, answer.json, `answer ${answer.status}`).message;
}

export interface CampaignData {
  summary: resources.CampaignListItem;
  campaign: resources.Campaign;
  leads: resources.Lead[];
  replies: resources.Reply[];
  clicks: resources.LinkClickEvent[];
  opens: resources.EmailOpenEvent[];
}

export interface AccountSnapshot {
  workspaces: resources.Workspace[];
  domains: resources.Domain[];
  contactLists: resources.ContactList[];
  campaigns: CampaignData[];
  sequences: resources.EmailSequence[];
}

/** Workspaces come as a bare array or as the {data,total} envelope, depending on the emulator's settings. */
export async function listWorkspaces(api: Api): Promise<resources.Workspace[]> {
  const answer = await api.get(PATHS.workspaces);
  if (answer.status !== 200) throw new Error(`GET workspaces answered ${answer.status}`);
  const records = Array.isArray(answer.json) ? answer.json : parseStrict(resources.pageEnvelope, answer.json, "workspaces envelope").data;
  return records.map((record, index) => parseStrict(resources.workspace, record, `workspace ${index}`));
}

export async function readCampaign(api: Api, summary: resources.CampaignListItem): Promise<CampaignData> {
  const byUid = { campaign_uid: summary.uid };
  const [campaign, leads, replies, clicks, opens] = await Promise.all([
    api.ok(PATHS.campaign, byUid, resources.campaign),
    api.walk(PATHS.leads, byUid, resources.lead),
    api.ok(PATHS.replies, byUid, resources.reply.array()),
    api.walk(PATHS.linkClickEvents, byUid, resources.linkClickEvent),
    api.walk(PATHS.emailOpenEvents, byUid, resources.emailOpenEvent),
  ]);
  return { summary, campaign, leads: leads.records, replies, clicks: clicks.records, opens: opens.records };
}

/** Everything one account can read, through the public API only. */
export async function snapshotAccount(api: Api): Promise<AccountSnapshot> {
  const [workspaces, domains, contactLists, summaries] = await Promise.all([
    listWorkspaces(api),
    api.walk(PATHS.domains, {}, resources.domain),
    api.walk(PATHS.contacts, {}, resources.contactList),
    api.walk(PATHS.campaigns, {}, resources.campaignListItem),
  ]);
  const campaigns: CampaignData[] = [];
  for (const summary of summaries.records) campaigns.push(await readCampaign(api, summary));
  const sequenceIds = [...new Set(campaigns.flatMap((data) => [...sequenceIdsOf(data.leads)]))];
  const sequences = await Promise.all(sequenceIds.map((id) => api.ok(PATHS.emailSequence, { id }, resources.emailSequence)));
  return { workspaces, domains: domains.records, contactLists: contactLists.records, campaigns, sequences };
}

export function schedulesOf(leads: resources.Lead[]): resources.Schedule[] {
  return leads.flatMap((lead) => lead.schedules);
}

/** Sequences a client can discover: those a schedule's email_data points at. */
export function sequenceIdsOf(leads: resources.Lead[]): Set<number> {
  return new Set(schedulesOf(leads).map((schedule) => schedule.email_data.id));
}

export const clickKey = (click: { schedule_id: number; link: string; clicked_on: string }): string =>
  `${click.schedule_id}|${click.link}|${click.clicked_on}`;
export const openKey = (open: { schedule_id: number; opened_on: string }): string => `${open.schedule_id}|${open.opened_on}`;

/** The snapshot in the ground truth's key format (see GroundTruth in src/emulator/options.ts). */
export function truthKeysOf(snapshot: AccountSnapshot): Record<TruthEntity, string[]> {
  const leads = snapshot.campaigns.flatMap((data) => data.leads);
  const schedules = schedulesOf(leads);
  const keys: Record<TruthEntity, Iterable<string>> = {
    workspaces: snapshot.workspaces.map((workspace) => String(workspace.id)),
    domains: snapshot.domains.map((domain) => String(domain.id)),
    contact_lists: snapshot.contactLists.map((list) => list.uid),
    campaigns: snapshot.campaigns.map((data) => data.campaign.uid),
    campaign_sending_domains: snapshot.campaigns.flatMap((data) => data.campaign.settings.sending_domains.map((id) => `${data.campaign.uid}|${id}`)),
    email_sequences: snapshot.sequences.map((sequence) => String(sequence.id)),
    leads: leads.map((lead) => lead.uid),
    contacts: leads.map((lead) => String(lead.contact.id)),
    schedules: schedules.map((schedule) => String(schedule.id)),
    replies: [...snapshot.campaigns.flatMap((data) => data.replies.map((reply) => String(reply.id))), ...schedules.flatMap((s) => s.replies.map((r) => String(r.id)))],
    link_clicks: snapshot.campaigns.flatMap((data) => data.clicks.map(clickKey)),
    email_opens: snapshot.campaigns.flatMap((data) => data.opens.map(openKey)),
  };
  return Object.fromEntries(TRUTH_ENTITIES.map((entity) => [entity, [...new Set(keys[entity])].sort()])) as Record<TruthEntity, string[]>;
}

/** The account's campaigns in one status, in listing order. */
export function campaignsWithStatus(snapshot: AccountSnapshot, status: resources.Campaign["status"]): CampaignData[] {
  return snapshot.campaigns.filter((data) => data.campaign.status === status);
}

export function sequenceCountOf(data: CampaignData): number {
  return sequenceIdsOf(data.leads).size;
}

/** A campaign in `created` whose discoverable sequence count passes `accepts`; fails the test when the seed has none. */
export function createdCampaign(snapshot: AccountSnapshot, accepts: (sequences: number) => boolean = () => true): CampaignData {
  const found = campaignsWithStatus(snapshot, "created").find((data) => accepts(sequenceCountOf(data)));
  if (!found) throw new Error("the seed has no campaign in created with the wanted number of email sequences");
  return found;
}

export function campaignWithStatus(snapshot: AccountSnapshot, status: resources.Campaign["status"]): CampaignData {
  const found = campaignsWithStatus(snapshot, status)[0];
  if (!found) throw new Error(`the seed has no campaign in ${status}`);
  return found;
}

/** An update_data that satisfies every rule of spec 4.3 for a campaign with `sequences` email sequences. */
export function validUpdateData(sequences: number, sendingDomains: number[]): Record<string, unknown> {
  return {
    name: "Spring outreach ✉️ 春",
    reply_to_address: "replies@example.com",
    daily_email_limit: 42,
    skip_days: ["Saturday", "Sunday"],
    single_subject: true,
    scheduling_strategy: sequences === 1 ? "single-message" : "sequential",
    from_time: "08:00:00",
    to_time: "17:30:00",
    time_zone: "Europe/Paris",
    add_unsub_link: true,
    unsub_link_type: "auto",
    custom_unsub_text: "",
    click_tracking_enabled: true,
    open_tracking_enabled: false,
    skip_dangerous_emails: true,
    skip_disposable_emails: false,
    skip_catchall_emails: true,
    skip_full_inbox_emails: false,
    skip_invalid_emails: true,
    forward_negative_emails: false,
    forward_netural_emails: true,
    sending_domains: sendingDomains,
  };
}

/** Domain ids of the campaign's own workspace, for a valid `sending_domains`: none that is being deleted. */
export function domainsOfWorkspace(snapshot: AccountSnapshot, workspaceId: number | null): number[] {
  return snapshot.domains.filter((domain) => domain.workspace_id === workspaceId && domain.status !== "deleting").map((domain) => domain.id);
}
