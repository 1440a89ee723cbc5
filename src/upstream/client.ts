import { LIFECYCLE_PATHS, PARAMS, PATHS, type Lifecycle } from "./endpoints.ts";
import { InvalidRecordError, UpstreamError } from "./errors.ts";
import type { ClientHooks } from "./hooks.ts";
import { HttpTransport, type HttpRequest, type RequestView, type Tally } from "./http.ts";
import { IntervalLimiter, type RequestLimiter } from "./limiter.ts";
import { isLastPage, PAGED_RESOURCES, servedPageSize, type Page, type PagedResource, type PageQuery, type PagesQuery } from "./paging.ts";
import { readRecord, readRecords, type Parsed, type ReadRecord } from "./parsing.ts";
import type { RecordOf, RecordTypeName } from "./record-types.ts";
import type { CreateSequenceBody, LifecycleBody, SequenceData, UpdateCampaignBody, UpdateData } from "./requests.ts";
import { listingOf, shapeOf, type ListingAnswer } from "./listing-answer.ts";
import { messageBody } from "./resources.ts";
import type { Logger } from "../logger.ts";
import { addStage, stageStart } from "../stage-timings.ts";

export { InvalidRecordError, UpstreamError } from "./errors.ts";
export type { ClientHooks } from "./hooks.ts";
export type { RequestLimiter } from "./limiter.ts";
export type { Page, PagedResource, PageQuery, PagesQuery } from "./paging.ts";
export type { Parsed, ReadRecord, RejectedRecord } from "./parsing.ts";
export type { RecordOf, RecordTypeName } from "./record-types.ts";

/** A listing that arrives whole (#13, #18), and when the request that got it was sent. */
export interface Listing<T> extends Parsed<T> {
  /** The size the {data, total} envelope announced; null for a bare array, or a total not usable. */
  total: number | null;
  observedAt: Date;
  /** How the answer's records deviated from the documented array, when they did (a list keyed by index or id). */
  shape?: string;
}

/** A record fetched by its identifier, and when the request that got it was sent. */
export interface Lookup<T> {
  record: ReadRecord<T>;
  observedAt: Date;
}

export interface UpstreamClientOptions {
  baseUrl: string;
  apiKey: string;
  /** Client-side pace, so a healthy run never provokes a 429. */
  requestsPerSecond?: number;
  /** Requests in flight at most; also the size of the keep-alive pool. */
  concurrency?: number;
  /** Per attempt, from the moment the request is sent. */
  timeoutMs?: number;
  maxRetries?: number;
  retryBaseMs?: number;
  retryCapMs?: number;
  /** Sent explicitly on every page request (the upstream's own default is 10). */
  pageSize?: number;
  /** Defaults to an in-process IntervalLimiter of requestsPerSecond. */
  limiter?: RequestLimiter;
  logger?: Logger;
  hooks?: ClientHooks;
}

const DEFAULTS = {
  requestsPerSecond: 10,
  concurrency: 4,
  timeoutMs: 30_000,
  maxRetries: 6,
  retryBaseMs: 250,
  retryCapMs: 30_000,
  pageSize: 100,
} as const;

/** Typed access to one account of the upstream API (spec section 4, contract part A). */
export class UpstreamClient {
  readonly #options: UpstreamClientOptions;
  readonly #http: HttpTransport;
  readonly #pageSize: number;
  readonly #view: RequestView;

  /** `transport` and `priority` are given only by tallied(): views share the connections, limiter and retry policy. */
  constructor(options: UpstreamClientOptions, transport?: HttpTransport, priority = 0) {
    this.#view = { tally: { requests: 0, retries: 0, answered: 0 }, priority };
    const requestsPerSecond = options.requestsPerSecond ?? DEFAULTS.requestsPerSecond;
    this.#options = options;
    this.#pageSize = options.pageSize ?? DEFAULTS.pageSize;
    this.#http = transport ?? new HttpTransport({
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      concurrency: options.concurrency ?? DEFAULTS.concurrency,
      timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
      retry: {
        maxRetries: options.maxRetries ?? DEFAULTS.maxRetries,
        baseMs: options.retryBaseMs ?? DEFAULTS.retryBaseMs,
        capMs: options.retryCapMs ?? DEFAULTS.retryCapMs,
      },
      limiter: options.limiter ?? new IntervalLimiter(requestsPerSecond),
      logger: options.logger,
      hooks: options.hooks,
    });
  }

  /** The limit every page request asks for. */
  get pageSize(): number {
    return this.#pageSize;
  }

  /** Running totals of this client (or view): requests sent (every attempt) and retries scheduled. */
  get stats(): Tally {
    return { ...this.#view.tally };
  }

  /**
   * A view of this client that shares its connections, limiter and retry
   * policy but counts its own requests and retries: one per run, so runs side
   * by side in one worker each report what they cost. Its requests wait for a
   * connection with `priority` (higher first), so a short events read is not
   * stuck behind a long leads walk. Closing any view closes the shared connections.
   */
  tallied(options: { priority?: number } = {}): UpstreamClient {
    return new UpstreamClient(this.#options, this.#http, options.priority ?? 0);
  }

  /** #18. The upstream may answer with a bare array or with the {data, total} envelope. */
  async listWorkspaces(signal?: AbortSignal): Promise<Listing<RecordOf<"workspaces">>> {
    const request: HttpRequest = { method: "GET", endpoint: PATHS.workspaces };
    const { envelope, observedAt, careful } = await this.#http.json(
      request,
      (body, sentAt, _bytes, carefully) => ({ envelope: this.#listing(request, body), observedAt: sentAt, careful: carefully }),
      this.#view,
      signal,
    );
    return { ...this.#readAll("workspaces", envelope.data, careful), total: envelope.total, observedAt, ...shapeOf(envelope) };
  }

  /**
   * One page of a paginated listing (#1, #11, #14, #15, #16, #17). An answer without a usable `total` (or a
   * bare array instead of the envelope) is read with its total null: one deviating field must not cost the
   * page's records. An answer that holds no array of records at all is a protocol error.
   */
  async page<R extends PagedResource>(resource: R, query: PageQuery, signal?: AbortSignal): Promise<Page<RecordOf<R>>> {
    const { endpoint, scope } = PAGED_RESOURCES[resource];
    if (scope === "campaign" && query.campaignUid === undefined) throw new TypeError(`listing ${resource} needs a campaignUid`);
    const limit = query.limit ?? this.#pageSize;
    const request: HttpRequest = {
      method: "GET",
      endpoint,
      query: {
        [PARAMS.campaignUid]: scope === "campaign" ? query.campaignUid : undefined,
        [PARAMS.workspaceId]: scope === "workspace" ? query.workspaceId : undefined,
        [PARAMS.limit]: limit,
        [PARAMS.offset]: query.offset,
      },
    };
    const { envelope, observedAt, bytes, careful } = await this.#http.json(
      request,
      (body, sentAt, size, carefully) => ({ envelope: this.#listing(request, body), observedAt: sentAt, bytes: size, careful: carefully }),
      this.#view,
      signal,
    );
    const parsed = this.#readAll(resource, envelope.data, careful);
    return { ...parsed, total: envelope.total, offset: query.offset, limit, observedAt, bytes, ...shapeOf(envelope) };
  }

  /**
   * Every page of a listing, one at a time, from `startOffset`, until the
   * listing ends (see isLastPage: an empty page, asked twice unless the total
   * says the end is reached, or a short page at the total). An empty page
   * that ends the listing is yielded too: its total is the last word on the
   * listing's size, and a record deleted just before it was asked shows only there.
   * A plain walk: the sync's own walk (src/sync/walk.ts) also heals a cursor
   * that the listing moved under.
   */
  async *pages<R extends PagedResource>(resource: R, query: PagesQuery, signal?: AbortSignal): AsyncGenerator<Page<RecordOf<R>>> {
    const { startOffset = 0, ...scope } = query;
    let offset = startOffset;
    let pageSize = this.#pageSize;
    for (;;) {
      let page = await this.page(resource, { ...scope, offset, limit: this.#pageSize }, signal);
      // An empty page where the total promises more, or where no total says there is no more, is more often a
      // glitch than the end: asked once more, as the sync's walk does.
      if (page.records.length + page.rejected.length === 0 && (page.total === null || offset < page.total)) page = await this.page(resource, { ...scope, offset, limit: this.#pageSize }, signal);
      const received = page.records.length + page.rejected.length;
      yield page;
      offset += received;
      if (isLastPage(received, offset, page.total, pageSize)) return;
      pageSize = servedPageSize(pageSize, received, offset, page.total);
    }
  }

  /** #13: every reply of a campaign, unpaginated: a bare array, or (as #18 may) the {data, total} envelope. */
  async listReplies(campaignUid: string, signal?: AbortSignal): Promise<Listing<RecordOf<"replies">>> {
    const request: HttpRequest = { method: "GET", endpoint: PATHS.replies, query: { [PARAMS.campaignUid]: campaignUid } };
    const { envelope, observedAt, careful } = await this.#http.json(
      request,
      (body, sentAt, _bytes, carefully) => ({ envelope: this.#listing(request, body), observedAt: sentAt, careful: carefully }),
      this.#view,
      signal,
    );
    return { ...this.#readAll("replies", envelope.data, careful), total: envelope.total, observedAt, ...shapeOf(envelope) };
  }

  /** #2 */
  getCampaign(uid: string, signal?: AbortSignal): Promise<Lookup<RecordOf<"campaign_detail">>> {
    return this.#one("campaign_detail", { method: "GET", endpoint: PATHS.campaign, query: { [PARAMS.campaignUid]: uid } }, signal);
  }

  /** #12 */
  getLead(uid: string, signal?: AbortSignal): Promise<Lookup<RecordOf<"leads">>> {
    return this.#one("leads", { method: "GET", endpoint: PATHS.lead, query: { [PARAMS.leadUid]: uid } }, signal);
  }

  /** #9 */
  getEmailSequence(id: number, signal?: AbortSignal): Promise<Lookup<RecordOf<"email_sequences">>> {
    return this.#one("email_sequences", { method: "GET", endpoint: PATHS.emailSequence, query: { [PARAMS.sequenceId]: id } }, signal);
  }

  /** #3: allowed only while the campaign is `created`; `updateData` is the whole settings object (spec 4.3). */
  async updateCampaign(uid: string, updateData: UpdateData): Promise<RecordOf<"campaign_detail">> {
    const body: UpdateCampaignBody = { campaign_uid: uid, update_data: updateData };
    return (await this.#one("campaign_detail", { method: "PATCH", endpoint: PATHS.campaign, body })).record.value;
  }

  /** #8: a create, so it is not repeated after an answer that may have been lost. */
  async createEmailSequence(campaignUid: string, data: SequenceData): Promise<RecordOf<"email_sequences">> {
    const body: CreateSequenceBody = { campaign_uid: campaignUid, sequence_data: data };
    return (await this.#one("email_sequences", { method: "POST", endpoint: PATHS.emailSequence, body, idempotent: false })).record.value;
  }

  /** #10: returns the upstream's message. */
  deleteEmailSequence(id: number): Promise<string> {
    return this.#message({ method: "DELETE", endpoint: PATHS.emailSequence, query: { [PARAMS.sequenceId]: id } });
  }

  /** #4 */
  startCampaign(uid: string): Promise<string> {
    return this.#lifecycle("start", uid);
  }

  /** #5 */
  pauseCampaign(uid: string): Promise<string> {
    return this.#lifecycle("pause", uid);
  }

  /** #6 */
  resumeCampaign(uid: string): Promise<string> {
    return this.#lifecycle("resume", uid);
  }

  /** #7 */
  cancelCampaign(uid: string): Promise<string> {
    return this.#lifecycle("cancel", uid);
  }

  /** Closes the connection pool; requests still queued are dropped. */
  close(): Promise<void> {
    return this.#http.close();
  }

  #lifecycle(operation: Lifecycle, uid: string): Promise<string> {
    const body: LifecycleBody = { campaign_uid: uid };
    return this.#message({ method: "POST", endpoint: LIFECYCLE_PATHS[operation], body });
  }

  #message(request: HttpRequest): Promise<string> {
    return this.#http.json(
      request,
      (body) => {
        const parsed = messageBody.safeParse(body);
        return parsed.success ? parsed.data.message : this.#protocolError(request, "expected a {message} body");
      },
      this.#view,
    );
  }

  async #one<N extends RecordTypeName>(type: N, request: HttpRequest, signal?: AbortSignal): Promise<Lookup<RecordOf<N>>> {
    const { body, observedAt, careful } = await this.#http.json(
      request,
      (answer, sentAt, _bytes, carefully) => ({ body: answer, observedAt: sentAt, careful: carefully }),
      this.#view,
      signal,
    );
    const validationStart = stageStart();
    const outcome = readRecord(type, body, careful);
    addStage("validation", validationStart);
    if ("record" in outcome) return { record: outcome.record, observedAt };
    throw new InvalidRecordError(outcome.rejected, { endpoint: request.endpoint, method: request.method, status: 200 });
  }

  /** `careful`: whether the answer's text asks for the careful read of its records (needsCarefulRead in parsing.ts). */
  #readAll<N extends RecordTypeName>(type: N, raws: readonly unknown[], careful: boolean): Parsed<RecordOf<N>> {
    const validationStart = stageStart();
    const parsed = readRecords(type, raws, careful);
    addStage("validation", validationStart);
    return parsed;
  }

  /** A listing's records and total (listing-answer.ts), or a protocol error. */
  #listing(request: HttpRequest, body: unknown): ListingAnswer {
    const answer = listingOf(body);
    return typeof answer === "string" ? this.#protocolError(request, answer) : answer;
  }

  #protocolError(request: HttpRequest, expectation: string): never {
    // A malformed envelope is most likely a proxy's or a half-deployed upstream's accident; asking again is cheap.
    throw new UpstreamError(`protocol error: ${expectation}`, {
      endpoint: request.endpoint,
      method: request.method,
      status: 200,
      retryable: true,
    });
  }
}
