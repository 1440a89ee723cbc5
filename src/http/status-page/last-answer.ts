import type { ClientHooks } from "../../upstream/hooks.ts";

/**
 * What the status page says about the upstream: the last answer this process
 * received (when, which endpoint, which status), and the last attempt that got
 * no answer at all (a timeout, a dropped connection). It is per process: each
 * worker replica talks to the upstream on its own, and the page shows the one
 * that served it.
 */

export interface UpstreamAnswer {
  at: Date;
  method: string;
  endpoint: string;
  status: number;
  durationMs: number;
}

export interface UpstreamSilence {
  at: Date;
  method: string;
  endpoint: string;
  error: string;
}

export interface LastUpstreamAnswer {
  answer: UpstreamAnswer | null;
  /** The latest attempt that got no response; shown only when it is newer than the last answer. */
  noAnswer: UpstreamSilence | null;
}

export interface UpstreamAnswerTracker {
  /** Hand these to the upstream client (combined with the metrics' hooks, see combineHooks). */
  readonly hooks: ClientHooks;
  last(): LastUpstreamAnswer;
}

export function trackUpstreamAnswers(now: () => Date = () => new Date()): UpstreamAnswerTracker {
  let answer: UpstreamAnswer | null = null;
  let noAnswer: UpstreamSilence | null = null;
  return {
    hooks: {
      onResponse: ({ endpoint, method, status, durationMs }) => {
        answer = { at: now(), method, endpoint, status, durationMs: Math.round(durationMs) };
      },
      onNoAnswer: ({ endpoint, method, error, callerStopped }) => {
        // Every attempt the upstream left unanswered, the last of a request's too (no retry follows it); a caller that
        // stopped waiting (a shutdown, a lost lease) says nothing about the upstream.
        if (!callerStopped) noAnswer = { at: now(), method, endpoint, error };
      },
    },
    last: () => ({ answer, noAnswer }),
  };
}

/** Both sets of hooks, called in order: the client takes one set. */
export function combineHooks(...all: ClientHooks[]): ClientHooks {
  return {
    onResponse: (event) => {
      for (const hooks of all) hooks.onResponse?.(event);
    },
    onNoAnswer: (event) => {
      for (const hooks of all) hooks.onNoAnswer?.(event);
    },
    onRetry: (event) => {
      for (const hooks of all) hooks.onRetry?.(event);
    },
  };
}
