import { Pool } from "undici";
import { API_KEY_HEADER, PARAMS, PATHS } from "../../src/upstream/endpoints.ts";
import { PAGED_RESOURCES, type PagedResource } from "../../src/upstream/paging.ts";
import { answerWriter, type AnswerWriter } from "./pages-file.ts";

/**
 * The fetch limit: every page the sync reads, walked with the same number of
 * requests in flight over a keep-alive pool, each answer decoded and
 * JSON-parsed, nothing validated, mapped or written to the warehouse. Campaigns
 * are walked `concurrency` at a time, so the pool is never short of work.
 * The bodies go to a file for the write-side limits (an append, no re-encoding).
 */

const PAGE_SIZE = 100;

interface Walker {
  get(path: string, query: Record<string, string | number>): Promise<{ text: string; json: unknown }>;
  requests: number;
}

function walker(baseUrl: string, apiKey: string, concurrency: number): Walker & { close(): Promise<void> } {
  const pool = new Pool(new URL(baseUrl).origin, { connections: concurrency });
  const state = {
    requests: 0,
    async get(path: string, query: Record<string, string | number>) {
      state.requests += 1;
      const search = new URLSearchParams(Object.entries(query).map(([name, value]): [string, string] => [name, String(value)]));
      const answer = await pool.request({ method: "GET", path: `${path}?${search.toString()}`, headers: { [API_KEY_HEADER]: apiKey, accept: "application/json" } });
      const text = await answer.body.text();
      if (answer.statusCode !== 200) throw new Error(`GET ${path} answered ${answer.statusCode}: ${text.slice(0, 200)}`);
      return { text, json: JSON.parse(text) as unknown };
    },
    close: () => pool.close(),
  };
  return state;
}

/** Every page of a listing, in turn; yields each page's records after saving its body. */
async function walkListing(http: Walker, out: AnswerWriter, resource: PagedResource, campaignUid: string | null): Promise<unknown[][]> {
  const pages: unknown[][] = [];
  for (let offset = 0; ; ) {
    const query = { [PARAMS.limit]: PAGE_SIZE, [PARAMS.offset]: offset, ...(campaignUid === null ? {} : { [PARAMS.campaignUid]: campaignUid }) };
    const { text, json } = await http.get(PAGED_RESOURCES[resource].endpoint, query);
    const { data, total } = json as { data: unknown[]; total: number };
    await out.save(resource, campaignUid, text);
    pages.push(data);
    offset += data.length;
    if (data.length < PAGE_SIZE || offset >= total) return pages;
  }
}

async function walkCampaign(http: Walker, out: AnswerWriter, campaignUid: string): Promise<number> {
  let records = 1;
  const detail = await http.get(PATHS.campaign, { [PARAMS.campaignUid]: campaignUid });
  await out.save("campaign_detail", campaignUid, detail.text);
  const sequenceIds = new Set<number>();
  for (const page of await walkListing(http, out, "leads", campaignUid)) {
    records += page.length;
    for (const lead of page as { schedules?: { email_data?: { id?: number } | null }[] | null }[]) {
      for (const schedule of lead.schedules ?? []) if (typeof schedule.email_data?.id === "number") sequenceIds.add(schedule.email_data.id);
    }
  }
  const replies = await http.get(PATHS.replies, { [PARAMS.campaignUid]: campaignUid });
  await out.save("replies", campaignUid, replies.text);
  records += (replies.json as unknown[]).length;
  for (const resource of ["link_clicks", "email_opens"] as const) {
    for (const page of await walkListing(http, out, resource, campaignUid)) records += page.length;
  }
  await Promise.all(
    [...sequenceIds].map(async (id) => {
      const sequence = await http.get(PATHS.emailSequence, { [PARAMS.sequenceId]: id });
      await out.save("email_sequences", campaignUid, sequence.text);
    }),
  );
  return records + sequenceIds.size;
}

export async function fetchOnly(baseUrl: string, apiKey: string, concurrency: number, answersFile: string): Promise<{ records: number; requests: number }> {
  const http = walker(baseUrl, apiKey, concurrency);
  const out = answerWriter(answersFile);
  const workspaces = await http.get(PATHS.workspaces, {});
  await out.save("workspaces", null, workspaces.text);
  let records = (Array.isArray(workspaces.json) ? workspaces.json : (workspaces.json as { data: unknown[] }).data).length;
  for (const resource of ["domains", "contact_lists"] as const) for (const page of await walkListing(http, out, resource, null)) records += page.length;
  const campaignUids: string[] = [];
  for (const page of await walkListing(http, out, "campaigns", null)) campaignUids.push(...(page as { uid: string }[]).map((campaign) => campaign.uid));
  records += campaignUids.length;
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < campaignUids.length) {
        const walked = await walkCampaign(http, out, campaignUids[next++] as string);
        records += walked;
      }
    }),
  );
  await out.close();
  await http.close();
  return { records, requests: http.requests };
}
