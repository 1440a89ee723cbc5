import { DelayedError, UnrecoverableError, WaitingError, Worker, type Job, type Queue } from "bullmq";
import { clip } from "../clip.ts";
import { ShortListingError } from "../sync/run-list.ts";
import { CampaignBusyError, type RunSummary } from "../sync/runs.ts";
import { isKeyRefused, UpstreamError } from "../upstream/errors.ts";
import { rateLimitPause } from "../upstream/http.ts";

/**
 * How a finished run, or an error thrown by one, decides what BullMQ does
 * with its job:
 * - done: the job completes, also when the run is partial only because some
 *   records could not be placed (they are kept in rejected_records);
 * - interrupted (shutdown, lost lease): the job goes back to waiting, without
 *   spending an attempt, and the next worker resumes from the checkpoints;
 * - busy (another process, e.g. `sync --once`, holds the campaign's lock): the
 *   job steps aside for a while, without spending an attempt;
 * - rate-limited (a 429 the client's retries could not ride out): the whole
 *   queue pauses for Retry-After and the job waits, without spending an attempt;
 * - refused (401: the upstream refused the API key): the job fails now, and
 *   the events tick holds off until a discovery is not refused (key-refusal.ts);
 * - unrecoverable (only errors a retry would repeat): the job fails now, with
 *   the reason;
 * - retry: the job fails this attempt and BullMQ retries it with backoff.
 */

export type Verdict =
  | { kind: "done" }
  | { kind: "interrupted"; reason: string }
  | { kind: "busy"; reason: string }
  | { kind: "rate-limited"; ms: number; reason: string }
  | { kind: "refused"; reason: string }
  | { kind: "unrecoverable"; reason: string }
  | { kind: "retry"; reason: string };

/** What the queue reads from the engine's RunSummary. */
export type RunResult = Pick<RunSummary, "runId" | "outcome" | "failures">;
type RunFailure = RunSummary["failures"][number];

const MAX_REASON_LENGTH = 2_000;

/** `signal` is the one the run was given: once it aborted, whatever failed did so because the run was told to stop. */
export function verdictOfRun(result: RunResult, signal: AbortSignal): Verdict {
  if (result.outcome === "succeeded") return { kind: "done" };
  if (result.outcome === "aborted" || signal.aborted) return { kind: "interrupted", reason: `run ${result.runId} was stopped (${result.outcome})` };
  // Partial only because records could not be placed: they are in rejected_records, and another attempt would meet them again.
  if (result.failures.length === 0) return { kind: "done" };
  return verdictOfErrors(
    result.failures.map((failure) => failure.error),
    result.failures.map(describeFailure).join("; "),
  );
}

export function verdictOfError(error: unknown, signal: AbortSignal): Verdict {
  if (signal.aborted || (error instanceof Error && error.name === "AbortError")) {
    return { kind: "interrupted", reason: error instanceof Error ? error.message : String(error) };
  }
  if (error instanceof CampaignBusyError) return { kind: "busy", reason: error.message };
  const asError = error instanceof Error ? error : new Error(String(error));
  return verdictOfErrors([asError], asError.message);
}

function verdictOfErrors(errors: Error[], description: string): Verdict {
  const reason = clip(description, MAX_REASON_LENGTH) || "the run failed without naming an error";
  const upstream = errors.filter((error): error is UpstreamError => error instanceof UpstreamError);
  if (upstream.some(isKeyRefused)) return { kind: "refused", reason: `the upstream rejected the API key (401): ${reason}` };
  const throttled = upstream.filter((error) => error.status === 429);
  if (throttled.length > 0) {
    const ms = Math.max(...throttled.map((error) => rateLimitPause(error.retryAfterMs)));
    return { kind: "rate-limited", ms, reason };
  }
  // Errors that are not the upstream's (a dropped database connection, say) are worth another attempt. So is a 404
  // that outlived the run: a campaign found gone ends its run cleanly (syncCampaign), so what is left is a stray one.
  // A whole listing short of its own total (run-list.ts) would be as short again.
  const worthRetrying = errors.some(
    (error) => error instanceof UpstreamError ? error.retryable || error.status === 404 : !(error instanceof ShortListingError),
  );
  return worthRetrying ? { kind: "retry", reason } : { kind: "unrecoverable", reason };
}

function describeFailure(failure: RunFailure): string {
  const where = failure.campaignUid === null ? failure.stream : `${failure.stream} of campaign ${failure.campaignUid}`;
  return `${where}: ${failure.error.message}`;
}

/**
 * Carries out a verdict inside a processor: returns for done, otherwise throws what BullMQ understands.
 * A busy job steps aside for `busyDelayMs`.
 */
export async function settle(verdict: Verdict, job: Job, token: string | undefined, queue: Queue, busyDelayMs = 0): Promise<void> {
  switch (verdict.kind) {
    case "done":
      return;
    case "interrupted":
      await job.moveToWait(token);
      throw new WaitingError(verdict.reason);
    case "busy":
      await job.moveToDelayed(Date.now() + busyDelayMs, token);
      throw new DelayedError(verdict.reason);
    case "rate-limited":
      await queue.rateLimit(verdict.ms);
      throw Worker.RateLimitError();
    case "refused":
    case "unrecoverable":
      throw new UnrecoverableError(verdict.reason);
    case "retry":
      throw new Error(verdict.reason);
  }
}
