import type { IncomingHttpHeaders } from "node:http";
import PQueue from "p-queue";
import { Pool } from "undici";
import { bodyText, UndecodableBodyError, type BodyText } from "./body-text.ts";
import { LinkedSignal } from "../linked-signal.ts";
import { API_KEY_HEADER } from "./endpoints.ts";
import { UpstreamError } from "./errors.ts";
import type { ClientHooks } from "./hooks.ts";
import type { RequestLimiter } from "./limiter.ts";
import { withRetries, type RetryPolicy } from "./retry.ts";
import { parseJson } from "./exact-json.ts";
import { needsCarefulRead } from "./parsing.ts";
import { storableString } from "./storable-text.ts";
import { clip } from "../clip.ts";
import { addStage, stageStart } from "../stage-timings.ts";
import type { Logger } from "../logger.ts";
import { secretScrubber } from "../scrub.ts";

/**
 * One account's connection to the upstream: a keep-alive pool of
 * `concurrency` sockets, a queue that lets no more than that many requests be
 * in flight, the account's limiter, a per-attempt timeout and retries.
 * Answers come back as parsed JSON, the API key replaced wherever the upstream
 * echoed it; everything else becomes an UpstreamError.
 */

export type HttpMethod = "GET" | "POST" | "PATCH" | "DELETE";

/**
 * Keys at least this long are replaced in answers. A shorter one (a test's `k`) matches ordinary text: replacing
 * it would rewrite values and field names, changing the data read, and it keeps nothing secret anyway.
 */
const SCRUBBED_KEY_LENGTH = 8;

export interface HttpRequest {
  method: HttpMethod;
  /** One of PATHS; also the `endpoint` in logs, metrics and errors. */
  endpoint: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /**
   * False when repeating the request could repeat its effect (a create).
   * Such a request is retried only when the upstream surely did not act on
   * it: a 429, or a connection that was refused.
   */
  idempotent?: boolean;
}

export interface HttpTransportOptions {
  baseUrl: string;
  apiKey: string;
  concurrency: number;
  timeoutMs: number;
  retry: RetryPolicy;
  limiter: RequestLimiter;
  logger?: Logger | undefined;
  hooks?: ClientHooks | undefined;
}

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  bytes: Buffer;
}

const EXCERPT_LENGTH = 200;

/** Where the attempts and retries of some calls are counted (one per client view, see UpstreamClient#tallied). */
export interface Tally {
  requests: number;
  retries: number;
  /** Attempts the upstream answered with a success (2xx): whether a run fetched anything at all, if only nothing new. */
  answered: number;
}

/** One client view's requests: where they are counted, and their rank in the queue of requests waiting to be sent. */
export interface RequestView {
  tally: Tally;
  /** Higher goes first among requests waiting for a connection (p-queue priority). */
  priority: number;
}

export class HttpTransport {
  readonly #options: HttpTransportOptions;
  /** Removes the API key from a text (an error message, an answer's excerpt) in any spelling (scrub.ts). */
  readonly #scrub: (text: string) => string;
  /**
   * Removes the API key from an answer's body before anything reads it: a key the upstream echoes inside a record
   * would otherwise be stored (an unknown field in `_extra`, a rejected record's payload, a field issue's raw value).
   * The text is JSON and stays JSON; one that is not (an HTML error page) is scrubbed again as text in its excerpt.
   */
  readonly #scrubBody: (text: string) => string;
  readonly #pool: Pool;
  readonly #queue: PQueue;
  readonly #pathPrefix: string;
  #closed = false;

  constructor(options: HttpTransportOptions) {
    this.#options = options;
    this.#scrub = secretScrubber([options.apiKey]);
    this.#scrubBody = options.apiKey.length >= SCRUBBED_KEY_LENGTH ? secretScrubber([options.apiKey], { json: true }) : (text) => text;
    const base = new URL(options.baseUrl);
    this.#pathPrefix = base.pathname.replace(/\/+$/, "");
    this.#pool = new Pool(base.origin, { connections: options.concurrency });
    this.#queue = new PQueue({ concurrency: options.concurrency });
  }

  /**
   * Sends the request, retrying as the policy allows, and returns what `read`
   * makes of the JSON of a 2xx answer. `read` runs inside the attempt, so a
   * retryable UpstreamError it throws (a malformed envelope) asks again.
   * `careful` says whether the answer's text asks for the careful read of its
   * records (see needsCarefulRead in parsing.ts).
   */
  async json<T>(
    request: HttpRequest,
    read: (body: unknown, sentAt: Date, bytes: number, careful: boolean) => T,
    view: RequestView,
    signal?: AbortSignal,
  ): Promise<T> {
    const { tally } = view;
    const attemptOnce = async (attempt: number): Promise<T> => {
      if (this.#closed) throw this.#error(request, "the client is closed", { retryable: false });
      const answer = await this.#queue.add(() => this.#attempt(request, attempt, tally, signal), { signal, priority: view.priority });
      return read(answer.body, answer.sentAt, answer.bytes, answer.careful);
    };
    try {
      return await withRetries(attemptOnce, this.#options.retry, {
        signal,
        onRetry: (error, attempt, delayMs) => this.#reportRetry(request, error, attempt, delayMs, tally),
      });
    } catch (error) {
      // Whatever was under way when the caller gave up (queue, limiter, socket, backoff), the caller's reason wins.
      if (signal?.aborted) throw signal.reason;
      throw error;
    }
  }

  /** Lets requests already queued finish, refuses new ones, then closes the sockets. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#queue.onIdle();
    await this.#pool.close();
  }

  async #attempt(
    request: HttpRequest,
    attempt: number,
    tally: Tally,
    signal: AbortSignal | undefined,
  ): Promise<{ body: unknown; sentAt: Date; bytes: number; careful: boolean }> {
    await this.#options.limiter.acquire(signal);
    // The timeout starts only now, so time spent queued or paused never counts against an attempt.
    const attemptSignal = new LinkedSignal([signal], this.#options.timeoutMs);
    const sentAt = new Date();
    const started = performance.now();
    tally.requests += 1;
    let response: RawResponse;
    try {
      response = await this.#send(request, attemptSignal.signal);
    } catch (error) {
      // Tallied above, so reported too: the metrics count every attempt a run's requests count.
      if (signal?.aborted) {
        this.#reportNoAnswer(request, attempt, started, "the caller stopped waiting", true);
        throw signal.reason;
      }
      const failure = this.#networkError(request, error, attemptSignal.timedOut);
      this.#log(request, attempt, started, undefined, failure.message);
      this.#reportNoAnswer(request, attempt, started, failure.message, false);
      throw failure;
    } finally {
      attemptSignal.dispose();
    }
    this.#log(request, attempt, started, response.status);
    if (response.status >= 200 && response.status < 300) tally.answered += 1;
    this.#options.hooks?.onResponse?.({
      endpoint: request.endpoint,
      method: request.method,
      status: response.status,
      durationMs: performance.now() - started,
      attempt,
    });
    const { text, escaped } = this.#decode(request, response);
    const { value, exact, controlCharacters } = this.#interpret(request, response, text);
    // Raw control characters read as if escaped may be a NUL, which the text's own look (needsCarefulRead) cannot show.
    return { body: value, sentAt, bytes: text.length, careful: exact || escaped || controlCharacters === true || needsCarefulRead(text) };
  }

  async #send(request: HttpRequest, signal: AbortSignal): Promise<RawResponse> {
    const headers: Record<string, string> = { [API_KEY_HEADER]: this.#options.apiKey, accept: "application/json" };
    let body: string | undefined;
    if (request.body !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(request.body);
    }
    const answer = await this.#pool.request({
      method: request.method,
      path: this.#path(request),
      headers,
      body,
      signal,
    });
    return { status: answer.statusCode, headers: answer.headers, bytes: Buffer.from(await answer.body.arrayBuffer()) };
  }

  /**
   * The answer's text (body-text.ts), the API key replaced wherever the upstream echoed it. Only a 2xx answer needs
   * its body: any other is judged by its status (and Retry-After), the body being only its message.
   */
  #decode(request: HttpRequest, response: RawResponse): BodyText {
    let decoded: BodyText;
    try {
      decoded = bodyText(response.headers, response.bytes);
    } catch (error) {
      const reason = `a body that cannot be decoded: ${error instanceof Error ? error.message : String(error)}`;
      if (response.status < 200 || response.status >= 300) return { text: `(${reason})`, escaped: false };
      // A cut compressed answer is a transport accident, asked again; a coding Node cannot undo stays so.
      const retryable = (request.idempotent ?? true) && !(error instanceof UndecodableBodyError);
      throw this.#error(request, `status ${response.status} with ${reason}`, { status: response.status, retryable });
    }
    return { ...decoded, text: this.#scrubBody(decoded.text) };
  }

  #path(request: HttpRequest): string {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) query.set(name, String(value));
    }
    const search = query.toString();
    return `${this.#pathPrefix}${request.endpoint}${search === "" ? "" : `?${search}`}`;
  }

  #interpret(request: HttpRequest, response: RawResponse, text: string): ReturnType<typeof parseJson> {
    const idempotent = request.idempotent ?? true;
    if (response.status >= 200 && response.status < 300) {
      const parseStart = stageStart();
      try {
        const parsed = parseJson(text);
        if (parsed.controlCharacters) {
          this.#options.logger?.warn({ endpoint: request.endpoint, method: request.method }, "the answer's strings held raw control characters (tabs, line breaks), which JSON refuses; read as if escaped");
        }
        if (parsed.nonFiniteNumbers) {
          this.#options.logger?.warn({ endpoint: request.endpoint, method: request.method }, "the answer held NaN or Infinity, which JSON refuses; each read as text, and named where a number is documented");
        }
        return parsed;
      } catch {
        // A cut or garbled 200 is a transport accident, not an answer.
        throw this.#error(request, `status ${response.status} with a body that is not JSON: ${excerpt(text, this.#scrub)}`, {
          status: response.status,
          retryable: idempotent,
        });
      } finally {
        addStage("jsonParse", parseStart);
      }
    }
    const upstreamMessage = errorMessageOf(text, this.#scrub);
    const retryAfterMs = retryAfterOf(response.headers["retry-after"]);
    if (response.status === 429) {
      // A 429 holds back every request of the account.
      const pauseMs = rateLimitPause(retryAfterMs);
      this.#options.limiter.pauseFor(pauseMs);
      throw this.#error(request, `rate limited (429): ${upstreamMessage}`, { status: 429, upstreamMessage, retryable: true, retryAfterMs: pauseMs });
    }
    // A 5xx that says when to come back (a 503 during maintenance) is taken at its word, for every request of the
    // account: the server answers them all alike meanwhile.
    const unavailableFor = response.status >= 500 && retryAfterMs !== undefined && retryAfterMs > 0 ? retryAfterMs : undefined;
    if (unavailableFor !== undefined) this.#options.limiter.pauseFor(unavailableFor);
    throw this.#error(request, `failed with ${response.status}: ${upstreamMessage}`, {
      status: response.status,
      upstreamMessage,
      retryable: response.status >= 500 && idempotent,
      retryAfterMs: unavailableFor,
    });
  }

  #networkError(request: HttpRequest, error: unknown, timedOut: boolean): UpstreamError {
    if (timedOut) return this.#error(request, `no complete answer within ${this.#options.timeoutMs} ms`, { retryable: request.idempotent ?? true });
    const code = (error as { code?: unknown }).code;
    const text = error instanceof Error ? error.message : String(error);
    const refused = code === "ECONNREFUSED";
    // A request undici refuses to send (a header it cannot carry) would be refused again.
    const unsendable = code === "UND_ERR_INVALID_ARG";
    return this.#error(request, `network error ${typeof code === "string" ? `${code}: ` : ""}${this.#scrub(text)}`, {
      retryable: !unsendable && ((request.idempotent ?? true) || refused),
    });
  }

  #error(
    request: HttpRequest,
    message: string,
    details: { status?: number; upstreamMessage?: string; retryable: boolean; retryAfterMs?: number | undefined },
  ): UpstreamError {
    return new UpstreamError(this.#scrub(message), { endpoint: request.endpoint, method: request.method, ...details });
  }


  #reportRetry(request: HttpRequest, error: UpstreamError, attempt: number, delayMs: number, tally: Tally): void {
    tally.retries += 1;
    this.#options.hooks?.onRetry?.({ endpoint: request.endpoint, method: request.method, status: error.status, error: error.message, attempt, delayMs });
  }

  #reportNoAnswer(request: HttpRequest, attempt: number, started: number, error: string, callerStopped: boolean): void {
    this.#options.hooks?.onNoAnswer?.({ endpoint: request.endpoint, method: request.method, error, durationMs: performance.now() - started, attempt, callerStopped });
  }

  #log(request: HttpRequest, attempt: number, started: number, status: number | undefined, error?: string): void {
    this.#options.logger?.debug(
      { method: request.method, endpoint: request.endpoint, status, durationMs: Math.round(performance.now() - started), attempt, error },
      "upstream request",
    );
  }
}

/** The `message` of a JSON error body, or a short plain-text excerpt of anything else (an HTML error page). */
function errorMessageOf(text: string, scrub: (text: string) => string): string {
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed === "object" && parsed !== null && typeof (parsed as { message?: unknown }).message === "string") {
      return excerpt((parsed as { message: string }).message, scrub);
    }
  } catch {
    // not JSON: fall through to the excerpt
  }
  return excerpt(text, scrub);
}

function excerpt(text: string, scrub: (text: string) => string): string {
  // Scrubbed whole, before the cut: a key that straddles the cut would otherwise leave its first part behind.
  // The excerpt ends up in the run's errors (jsonb), where a NUL or a lone surrogate would keep the run from finishing.
  const plain = storableString(scrub(text))
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, " ")
    .replace(/<[^>]*>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  if (plain === "") return "(empty body)";
  return clip(plain, EXCERPT_LENGTH);
}

/** How long a 429 holds the account back when its Retry-After is missing, 0 or a date already past. */
const DEFAULT_RATE_LIMIT_PAUSE_MS = 1_000;

/**
 * How long a 429 holds the account back: its Retry-After, or a second when it names no wait to come. `0` (or a
 * date already past) promises nothing: asked again at once, the upstream would only answer 429 again; Redis would
 * also refuse a pause of 0 ms.
 */
export function rateLimitPause(retryAfterMs: number | undefined): number {
  return retryAfterMs !== undefined && retryAfterMs > 0 ? retryAfterMs : DEFAULT_RATE_LIMIT_PAUSE_MS;
}

/**
 * The longest wait a Retry-After buys: one request an hour then asks whether it is over, so an upstream that lifts
 * its limit early is seen within the hour (and no timer is asked for more than the 24.8 days Node's can hold, past
 * which it would fire every millisecond).
 */
const MAX_RETRY_AFTER_MS = 3_600_000;

/** Retry-After in whole seconds (contract A.2), or an HTTP date; in milliseconds, at most MAX_RETRY_AFTER_MS. */
function retryAfterOf(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === "") return undefined;
  if (/^\d+$/.test(value.trim())) return Math.min(Number(value.trim()) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, at - Date.now()), MAX_RETRY_AFTER_MS);
}
