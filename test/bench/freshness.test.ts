import { describe, expect, it } from "vitest";
import { lagsOf, quantile, summarize, type Lag, type UpstreamEvent } from "../../bench/freshness/lag.ts";
import { difference, requestCounts } from "../../bench/freshness/requests.ts";

/** The arithmetic of bench/freshness: lags with censored events, and requests read from /metrics. */

const exact = (seconds: number): Lag => ({ seconds, censored: false });
const atLeast = (seconds: number): Lag => ({ seconds, censored: true });

describe("quantile", () => {
  it("interpolates between ranks as percentile_cont does", () => {
    const lags = [exact(10), exact(20), exact(30), exact(40), exact(50)];
    expect(quantile(lags, 0.5)).toEqual({ seconds: 30, lowerBound: false });
    expect(quantile(lags, 0.95)).toEqual({ seconds: 48, lowerBound: false });
    expect(quantile(lags, 1)).toEqual({ seconds: 50, lowerBound: false });
    expect(quantile([], 0.5)).toBeNull();
  });

  it("is exact while every censored lag ranks above it, and a lower bound once one does not", () => {
    const lags = [exact(10), exact(20), exact(30), atLeast(200)];
    expect(quantile(lags, 0.5)).toEqual({ seconds: 25, lowerBound: false });
    expect(quantile(lags, 0.95)?.lowerBound).toBe(true);
    expect(quantile(lags, 1)).toEqual({ seconds: 200, lowerBound: true });
    // A censored lag below an exact one could move past it: the median is then only a bound.
    expect(quantile([atLeast(5), exact(20), exact(30)], 0.5)).toEqual({ seconds: 20, lowerBound: true });
  });
});

describe("lagsOf", () => {
  const offsetMs = 1_000_000;
  const window = { fromSimMs: 10_000, toSimMs: 70_000, offsetMs, observedUntilMs: offsetMs + 100_000 };
  const event = (stream: UpstreamEvent["stream"], key: string, happenedSimMs: number): UpstreamEvent => ({ stream, key, happenedSimMs });

  it("measures held events from their real time, counts missing ones as censored, and skips events outside the window", () => {
    const lags = lagsOf(
      [event("replies", "1", 20_000), event("replies", "2", 60_000), event("email_opens", "9|t", 9_999), event("link_clicks", "5|l|t", 70_000)],
      { replies: new Map([["1", offsetMs + 50_000]]), link_clicks: new Map(), email_opens: new Map([["9|t", offsetMs + 20_000]]) },
      window,
    );
    expect(lags.replies).toEqual([exact(30), atLeast(40)]);
    expect(lags.email_opens).toEqual([]);
    expect(lags.link_clicks).toEqual([]);
    expect(summarize(lags.replies)).toMatchObject({ events: 2, held: 1, p50: { seconds: 35, lowerBound: true } });
  });
});

describe("requestCounts", () => {
  const exposition = (replies: number, leads: number) =>
    [
      "# HELP coldsync_upstream_requests_total Upstream HTTP responses",
      "# TYPE coldsync_upstream_requests_total counter",
      `coldsync_upstream_requests_total{endpoint="/api/v1/replies/",method="GET",status="200"} ${replies}`,
      'coldsync_upstream_requests_total{endpoint="/api/v1/campaign/link-click-events/",method="GET",status="200"} 4',
      'coldsync_upstream_requests_total{endpoint="/api/v1/lead/",method="GET",status="200"} 1',
      `coldsync_upstream_requests_total{endpoint="/api/v1/leads/",method="GET",status="200"} ${leads}`,
      'coldsync_upstream_requests_total{endpoint="/api/v1/campaigns/",method="GET",status="503"} 2',
      'coldsync_upstream_request_duration_seconds_count{endpoint="/api/v1/replies/",method="GET"} 99',
    ].join("\n");

  it("groups every attempt by the rhythm its endpoint belongs to", () => {
    expect(requestCounts(exposition(3, 7))).toEqual({ events: 8, leads: 7, discovery: 2, total: 17 });
    expect(difference(requestCounts(exposition(3, 7)), requestCounts(exposition(6, 8)))).toEqual({ events: 3, leads: 1, discovery: 0, total: 4 });
  });
});
