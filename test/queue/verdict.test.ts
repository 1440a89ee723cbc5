import { describe, expect, it } from "vitest";
import { verdictOfError, verdictOfRun, type RunResult } from "../../src/queue/verdict.ts";
import { ShortListingError } from "../../src/sync/run-list.ts";
import { UpstreamError } from "../../src/upstream/errors.ts";

function upstream(status: number | undefined, retryable: boolean, retryAfterMs?: number): UpstreamError {
  return new UpstreamError(`answered ${status ?? "nothing"}`, { endpoint: "/api/v1/leads/", method: "GET", status, retryable, retryAfterMs });
}

function run(outcome: RunResult["outcome"], ...errors: Error[]): RunResult {
  return { runId: 7, outcome, failures: errors.map((error) => ({ campaignUid: "c-1", stream: "leads", error })) };
}

const live = new AbortController().signal;

describe("verdictOfRun", () => {
  it("requeues a run that failed because it was told to stop", () => {
    const controller = new AbortController();
    controller.abort();
    expect(verdictOfRun(run("partial", new Error("This operation was aborted")), controller.signal).kind).toBe("interrupted");
  });

  it("completes a succeeded run and requeues an aborted one", () => {
    expect(verdictOfRun(run("succeeded"), live).kind).toBe("done");
    // Partial only because records went to rejected_records: every stream finished, nothing to retry.
    expect(verdictOfRun(run("partial"), live).kind).toBe("done");
    expect(verdictOfRun(run("aborted"), live).kind).toBe("interrupted");
  });

  it("fails at once on 401, naming the stream and the campaign", () => {
    const unauthorized = verdictOfRun(run("failed", upstream(401, false), upstream(503, true)), live);
    expect(unauthorized).toMatchObject({ kind: "refused" });
    expect(unauthorized.kind === "refused" && unauthorized.reason).toMatch(/401.*leads of campaign c-1/);
  });

  it("does not retry a whole listing short of its own total: it would be as short again", () => {
    const short = new ShortListingError("replies", 2, 5);
    expect(verdictOfRun(run("partial", short), live).kind).toBe("unrecoverable");
    expect(verdictOfRun(run("partial", short, upstream(503, true)), live).kind).toBe("retry");
  });

  it("retries a 404 that outlived the run: a campaign found gone ends its run cleanly, so it was a stray one", () => {
    expect(verdictOfRun(run("partial", upstream(404, false)), live).kind).toBe("retry");
    expect(verdictOfRun(run("partial", upstream(404, false), upstream(400, false)), live).kind).toBe("retry");
  });

  it("pauses the queue for the longest Retry-After when a 429 outlived the client's retries", () => {
    expect(verdictOfRun(run("partial", upstream(429, true, 2_000), upstream(429, true, 5_000)), live)).toMatchObject({ kind: "rate-limited", ms: 5_000 });
    expect(verdictOfRun(run("partial", upstream(429, true)), live)).toMatchObject({ kind: "rate-limited", ms: 1_000 });
    // Retry-After: 0 (or a date already past): Redis refuses a 0 ms pause, and the client already retried at once.
    expect(verdictOfRun(run("partial", upstream(429, true, 0)), live)).toMatchObject({ kind: "rate-limited", ms: 1_000 });
  });

  it("retries when any failure is worth another attempt, and gives up when none is", () => {
    expect(verdictOfRun(run("partial", upstream(400, false), upstream(503, true)), live).kind).toBe("retry");
    expect(verdictOfRun(run("failed", new Error("connection terminated")), live).kind).toBe("retry");
    expect(verdictOfRun(run("partial", upstream(400, false)), live).kind).toBe("unrecoverable");
  });
});

describe("verdictOfError", () => {
  it("treats a thrown error like a one-failure run", () => {
    expect(verdictOfError(upstream(401, false), live).kind).toBe("refused");
    expect(verdictOfError(upstream(502, true), live).kind).toBe("retry");
  });

  it("requeues whatever was thrown once the signal aborted", () => {
    const controller = new AbortController();
    controller.abort();
    expect(verdictOfError(new Error("socket closed"), controller.signal).kind).toBe("interrupted");
  });
});
