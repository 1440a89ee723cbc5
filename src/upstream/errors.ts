import type { RejectedRecord } from "./parsing.ts";

/**
 * Failures of an upstream call. Every property is built from the request's
 * method and path, the status and the upstream's own words (scrubbed of the
 * key), never from headers, so an error can be logged or stored as it is.
 */

export interface UpstreamErrorDetails {
  endpoint: string;
  method: string;
  status?: number | undefined;
  upstreamMessage?: string | undefined;
  retryable: boolean;
  retryAfterMs?: number | undefined;
}

export class UpstreamError extends Error {
  override name = "UpstreamError";
  readonly status: number | undefined;
  readonly endpoint: string;
  readonly method: string;
  readonly upstreamMessage: string | undefined;
  /** How many attempts were made before giving up; set by the retry loop. */
  attempts = 1;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(message: string, details: UpstreamErrorDetails) {
    super(`${details.method} ${details.endpoint}: ${message}`);
    this.status = details.status;
    this.endpoint = details.endpoint;
    this.method = details.method;
    this.upstreamMessage = details.upstreamMessage;
    this.retryable = details.retryable;
    this.retryAfterMs = details.retryAfterMs;
  }
}

/** Whether the upstream refused the API key (401): account-wide, so nothing else the run asks for can succeed. */
export function isKeyRefused(error: unknown): error is UpstreamError {
  return error instanceof UpstreamError && error.status === 401;
}

/** A single-record answer whose body fails its schema: retrying would return the same record. */
export class InvalidRecordError extends UpstreamError {
  override name = "InvalidRecordError";
  readonly rejected: RejectedRecord;

  constructor(rejected: RejectedRecord, details: Omit<UpstreamErrorDetails, "retryable">) {
    super(`invalid ${rejected.stream} record: ${rejected.reason}`, { ...details, retryable: false });
    this.rejected = rejected;
  }
}
