import type { z } from "zod";
import { LIFECYCLE_PATHS, PARAMS, PATHS, type Lifecycle } from "./endpoints.ts";
import { InvalidRecordError, UpstreamError } from "./errors.ts";
import type { ClientHooks } from "./hooks.ts";
import { HttpTransport, type HttpRequest, type Tally } from "./http.ts";
import { IntervalLimiter, type RequestLimiter } from "./limiter.ts";
import { PAGED_RESOURCES, type Page, type PagedResource, type PageQuery, type PagesQuery, type RecordOf } from "./paging.ts";
import { parseRecord, parseRecords, type Parsed, type Stream } from "./parsing.ts";
import type { CreateSequenceBody, LifecycleBody, SequenceData, UpdateCampaignBody, UpdateData } from "./requests.ts";
import {
  campaign,
  emailSequence,
  lead,
  messageBody,
  pageEnvelope,
  reply,
  workspace,
  type Campaign,
  type EmailSequence,
  type Lead,
  type Reply,
  type Workspace,
} from "./resources.ts";
import type { Logger } from "../logger.ts";

export { InvalidRecordError, UpstreamError } from "./errors.ts";
export type { ClientHooks } from "./hooks.ts";
export type { RequestLimiter } from "./limiter.ts";
export type { Page, PagedResource, PageQuery, PagesQuery, RecordOf } from "./paging.ts";
export type { Parsed, RejectedRecord, Stream } from "./parsing.ts";

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
  readonly #hooks: ClientHooks | undefined;
  readonly #tally: Tally = { requests: 0, retries: 0 };

  /** `transport` is given only by tallied(): views share the connections, limiter and retry policy. */
  constructor(options: UpstreamClientOptions, transport?: HttpTransport) {
    const requestsPerSecond = options.requestsPerSecond ?? DEFAULTS.requestsPerSecond;
    this.#options = options;
    this.#pageSize = options.pageSize ?? DEFAULTS.pageSize;
    this.#hooks = options.hooks;
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

  /** Running totals of this client (or view): requests sent (every attempt) and retries scheduled. */
  get stats(): Tally {
    return { ...this.#tally };
  }

  /**
   * A view of this client that shares its connections, limiter and retry
   * policy but counts its own requests and retries: one per run, so runs side
   * by side in one worker each report what they cost. Closing any view closes
   * the shared connections.
   */
  tallied(): UpstreamClient {
    return new UpstreamClient(this.#options, this.#http);
  }

  /** #18. The upstream may answer with a bare array or with the {data, total} envelope. */
  async listWorkspaces(signal?: AbortSignal): Promise<Parsed<Workspace>> {
    const request: HttpRequest = { method: "GET", endpoint: PATHS.workspaces };
    const records = await this.#http.json(
      request,
      (body) => (Array.isArray(body) ? body : this.#envelope(request, body).data),
      this.#tally,
      signal,
    );
    return this.#parseAll("workspaces", workspace, records);
  }

  /** One page of a paginated listing (#1, #11, #14, #15, #16, #17). */
  async page<R extends PagedResource>(resource: R, query: PageQuery, signal?: AbortSignal): Promise<Page<RecordOf<R>>> {
    const { endpoint, schema, scope } = PAGED_RESOURCES[resource];
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
    const envelope = await this.#http.json(request, (body) => this.#envelope(request, body), this.#tally, signal);
    const parsed = this.#parseAll(resource, schema, envelope.data) as Parsed<RecordOf<R>>;
    return { ...parsed, total: envelope.total, offset: query.offset, limit };
  }

  /**
   * Every page of a listing, one at a time, from `startOffset`. Stops at an
   * empty page or once the offset reaches the total the last page reported.
   */
  async *pages<R extends PagedResource>(resource: R, query: PagesQuery, signal?: AbortSignal): AsyncGenerator<Page<RecordOf<R>>> {
    const { startOffset = 0, ...scope } = query;
    let offset = startOffset;
    for (;;) {
      const page = await this.page(resource, { ...scope, offset, limit: this.#pageSize }, signal);
      const received = page.records.length + page.rejected.length;
      if (received === 0) return;
      yield page;
      offset += received;
      if (offset >= page.total) return;
    }
  }

  /** #13: every reply of a campaign, unpaginated. */
  async listReplies(campaignUid: string, signal?: AbortSignal): Promise<Parsed<Reply>> {
    const request: HttpRequest = { method: "GET", endpoint: PATHS.replies, query: { [PARAMS.campaignUid]: campaignUid } };
    const replies = await this.#http.json(
      request,
      (body) => (Array.isArray(body) ? body : this.#protocolError(request, "expected a JSON array of replies")),
      this.#tally,
      signal,
    );
    return this.#parseAll("replies", reply, replies);
  }

  /** #2 */
  getCampaign(uid: string, signal?: AbortSignal): Promise<Campaign> {
    return this.#one("campaigns", campaign, { method: "GET", endpoint: PATHS.campaign, query: { [PARAMS.campaignUid]: uid } }, signal);
  }

  /** #12 */
  getLead(uid: string, signal?: AbortSignal): Promise<Lead> {
    return this.#one("leads", lead, { method: "GET", endpoint: PATHS.lead, query: { [PARAMS.leadUid]: uid } }, signal);
  }

  /** #9 */
  getEmailSequence(id: number, signal?: AbortSignal): Promise<EmailSequence> {
    return this.#one("email_sequences", emailSequence, { method: "GET", endpoint: PATHS.emailSequence, query: { [PARAMS.sequenceId]: id } }, signal);
  }

  /** #3: allowed only while the campaign is `created`; `updateData` is the whole settings object (spec 4.3). */
  updateCampaign(uid: string, updateData: UpdateData): Promise<Campaign> {
    const body: UpdateCampaignBody = { campaign_uid: uid, update_data: updateData };
    return this.#one("campaigns", campaign, { method: "PATCH", endpoint: PATHS.campaign, body });
  }

  /** #8: a create, so it is not repeated after an answer that may have been lost. */
  createEmailSequence(campaignUid: string, data: SequenceData): Promise<EmailSequence> {
    const body: CreateSequenceBody = { campaign_uid: campaignUid, sequence_data: data };
    return this.#one("email_sequences", emailSequence, { method: "POST", endpoint: PATHS.emailSequence, body, idempotent: false });
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
      this.#tally,
    );
  }

  async #one<S extends z.ZodType>(stream: Stream, schema: S, request: HttpRequest, signal?: AbortSignal): Promise<z.infer<S>> {
    const outcome = parseRecord(stream, schema, await this.#http.json(request, (body) => body, this.#tally, signal));
    if ("record" in outcome) return outcome.record;
    this.#hooks?.onRejected?.(outcome.rejected);
    throw new InvalidRecordError(outcome.rejected, { endpoint: request.endpoint, method: request.method, status: 200 });
  }

  #parseAll<S extends z.ZodType>(stream: Stream, schema: S, raws: readonly unknown[]): Parsed<z.infer<S>> {
    const parsed = parseRecords(stream, schema, raws);
    for (const rejected of parsed.rejected) this.#hooks?.onRejected?.(rejected);
    return parsed;
  }

  #envelope(request: HttpRequest, body: unknown): z.infer<typeof pageEnvelope> {
    const envelope = pageEnvelope.safeParse(body);
    if (!envelope.success) this.#protocolError(request, "expected a {data: array, total: integer} envelope");
    return envelope.data;
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
