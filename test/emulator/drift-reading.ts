import type { DriftEntry } from "../../src/emulator/options.ts";
import { PATHS } from "../../src/upstream/endpoints.ts";
import type { Api, Query } from "../support/emulator.ts";

/**
 * Reading an account the same way every time, raw (drifted records do not
 * match the strict schemas), so that two reads can be compared answer by
 * answer and record by record; and replaying a drift plan on a clean record.
 */

export interface RawAnswer {
  /** The endpoint path, which names the records' shape. */
  path: string;
  query: Query;
  status: number;
  text: string;
  /** The records of the answer: a page's data, a bare array, or the one record. */
  records: Record<string, unknown>[];
  total?: number;
}

const PAGE_LIMIT = 100;
const MAX_PAGES = 40;

function recordsOf(json: unknown): { records: Record<string, unknown>[]; total?: number } {
  if (Array.isArray(json)) return { records: json as Record<string, unknown>[] };
  if (typeof json === "object" && json !== null && "data" in json) {
    const page = json as { data: Record<string, unknown>[]; total: number };
    return { records: page.data, total: page.total };
  }
  return { records: typeof json === "object" && json !== null ? [json as Record<string, unknown>] : [] };
}

async function get(api: Api, path: string, query: Query): Promise<RawAnswer> {
  const answer = await api.get(path, query);
  return { path, query, status: answer.status, text: answer.text, ...recordsOf(answer.json) };
}

async function walk(api: Api, path: string, query: Query, limit = PAGE_LIMIT): Promise<RawAnswer[]> {
  const pages: RawAnswer[] = [];
  for (let offset = 0, page = 0; page < MAX_PAGES; offset += limit, page++) {
    const answer = await get(api, path, { ...query, limit, offset });
    pages.push(answer);
    if (answer.total === undefined || offset + limit >= answer.total) break;
  }
  return pages;
}

/** Every answer of one fixed walk through the account: listings, each campaign's records, a few leads and every sequence. */
export async function readAccount(api: Api): Promise<RawAnswer[]> {
  const answers: RawAnswer[] = [await get(api, PATHS.workspaces, {})];
  answers.push(...(await walk(api, PATHS.domains, {})), ...(await walk(api, PATHS.contacts, {})));
  const campaigns = await walk(api, PATHS.campaigns, {});
  answers.push(...campaigns);
  const sequenceIds = new Set<number>();
  for (const uid of campaigns.flatMap((page) => page.records.map((record) => String(record.uid)))) {
    const byUid = { campaign_uid: uid };
    answers.push(await get(api, PATHS.campaign, byUid));
    const leads = await walk(api, PATHS.leads, byUid);
    answers.push(...leads, await get(api, PATHS.replies, byUid), ...(await walk(api, PATHS.linkClickEvents, byUid)), ...(await walk(api, PATHS.emailOpenEvents, byUid)));
    const leadRecords = leads.flatMap((page) => page.records);
    for (const lead of leadRecords.slice(0, 4)) answers.push(await get(api, PATHS.lead, { lead_uid: String(lead.uid) }));
    for (const lead of leadRecords) {
      for (const schedule of (lead.schedules as Record<string, unknown>[] | undefined) ?? []) {
        const data = schedule.email_data as Record<string, unknown> | undefined;
        if (data?.id !== undefined) sequenceIds.add(Number(data.id));
      }
    }
  }
  for (const id of [...sequenceIds].sort((a, b) => a - b)) answers.push(await get(api, PATHS.emailSequence, { id }));
  return answers;
}

/** `name[2]` and `name` segments of a drift path, e.g. `schedules[0].replies[1].reply_classification`. */
export function pathSegments(path: string): (string | number)[] {
  return [...path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((match) => (match[2] !== undefined ? Number(match[2]) : (match[1] as string)));
}

export function valueAt(record: unknown, path: string): unknown {
  let value = record;
  for (const segment of pathSegments(path)) value = (value as Record<string | number, unknown> | undefined)?.[segment];
  return value;
}

/** The clean record with the plan's deviations applied: what a drifted answer must hold. */
export function applyPlan(clean: Record<string, unknown>, plan: readonly DriftEntry[]): Record<string, unknown> {
  const copy = structuredClone(clean);
  for (const entry of plan) {
    const segments = pathSegments(entry.path);
    const field = segments.pop() as string;
    let holder: Record<string | number, unknown> = copy;
    for (const segment of segments) holder = holder[segment] as Record<string | number, unknown>;
    if (entry.kind === "missing") delete holder[field];
    else holder[field] = entry.value;
  }
  return copy;
}
