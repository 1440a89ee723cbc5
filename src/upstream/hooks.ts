/** Callbacks for metrics; called synchronously, so they must be cheap and must not throw. */
export interface ClientHooks {
  onResponse?(event: { endpoint: string; method: string; status: number; durationMs: number; attempt: number }): void;
  /** An attempt that got no response: a timeout, a dropped connection, or (`callerStopped`) the caller that stopped waiting. */
  onNoAnswer?(event: { endpoint: string; method: string; error: string; durationMs: number; attempt: number; callerStopped: boolean }): void;
  onRetry?(event: { endpoint: string; method: string; status: number | undefined; error: string; attempt: number; delayMs: number }): void;
}
