import { describe, expect, it } from "vitest";
import { clip, clipMiddle } from "../../src/clip.ts";
import { barChart, labelPositions, niceCeiling } from "../../src/http/status-page/charts.ts";
import { formatAge, formatDuration } from "../../src/http/status-page/format.ts";
import { html, raw } from "../../src/http/status-page/html.ts";
import { combineHooks, trackUpstreamAnswers } from "../../src/http/status-page/last-answer.ts";
import { PeriodicRead, type Section } from "../../src/http/status-page/periodic-read.ts";

/** The page's building blocks, without a warehouse: escaping, charts, formats, the upstream tracker. */

describe("html", () => {
  it("escapes interpolated text, nested markup stays markup", () => {
    const name = `<img src=x onerror="alert(1)">&'`;
    expect(html`<td title="${name}">${name}</td>`.text).toBe(
      "<td title=\"&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;&#39;\">&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;&#39;</td>",
    );
    expect(html`<ul>${["a<", "b"].map((item) => html`<li>${item}</li>`)}</ul>`.text).toBe("<ul><li>a&lt;</li><li>b</li></ul>");
    expect(html`${null}${undefined}${false}${0}${raw("<br>")}`.text).toBe("0<br>");
  });
});

describe("charts", () => {
  it("round axis maxima up to 1, 2 or 5 times a power of ten", () => {
    expect([0, 0.3, 1, 7, 12, 133, 600, 648].map(niceCeiling)).toEqual([1, 0.5, 1, 10, 20, 200, 1000, 1000]);
  });

  it("draws one bar per value with its tooltip, and the reference line in or above the scale", () => {
    const bars = [5, 0, 12].map((value) => ({ value, tone: "bar-ok" as const, title: `${value} <requests>` }));
    const common = { bars, xLabels: [{ index: 2, text: "12:00" }], formatValue: String, ariaLabel: "test", emptyText: "none" };
    const inScale = barChart({ ...common, reference: { value: 10, label: "budget 10/min", inScale: true } }).text;
    expect(inScale.match(/<rect /g)).toHaveLength(2);
    expect(inScale).toContain("<title>12 &lt;requests&gt;</title>");
    expect(inScale).toContain(">budget 10/min</text>");
    const above = barChart({ ...common, reference: { value: 600, label: "budget 600/min", inScale: false } }).text;
    expect(above).toContain("budget 600/min ↑ above the scale");
    expect(above).toContain(">20</text>");
    expect(barChart({ ...common, bars: [] }).text).toContain("none");
  });

  it("spreads x labels, always labelling the last bar", () => {
    expect(labelPositions(3, 5)).toEqual([0, 1, 2]);
    expect(labelPositions(60, 5)).toEqual([0, 15, 30, 44, 59]);
    expect(labelPositions(0, 5)).toEqual([]);
    expect(labelPositions(3, 1)).toEqual([2]);
  });
});

describe("formats", () => {
  it("write durations and ages short", () => {
    expect([120, 4_200, 42_000, 192_000, 3_900_000, 90_000_000].map(formatDuration)).toEqual(["120 ms", "4.2 s", "42 s", "3 min 12 s", "1 h 5 min", "1 d 1 h"]);
    expect([9_000, 600_000, 7_300_000, 200_000_000].map(formatAge)).toEqual(["9 s", "10 min", "2 h", "2 d"]);
  });

  it("clip long text between the characters a reader sees, never inside a surrogate pair or a cluster", () => {
    expect(clip("short", 5)).toBe("short");
    expect(clip("abcdef", 5)).toBe("abcd…");
    // Five characters in ten UTF-16 units: it fits.
    expect(clip("🚀🚀🚀🚀🚀", 5)).toBe("🚀🚀🚀🚀🚀");
    expect(clip(`${"a".repeat(298)}🚀 launch failed`, 300)).toBe(`${"a".repeat(298)}🚀…`);
    expect(clip(`${"a".repeat(297)}🚀 launch failed`, 299)).toBe(`${"a".repeat(297)}🚀…`);
    // A flag is two code points, a family four joined by zero-width joiners: each one character.
    expect(clip("ab🇫🇷👨‍👩‍👧xyz", 4)).toBe("ab🇫🇷…");
    expect(clip("ab🇫🇷👨‍👩‍👧xyz", 5)).toBe("ab🇫🇷👨‍👩‍👧…");
    expect(clipMiddle("cmp_a1b2c3d4e5f6g7h8x9y8z7", 15)).toBe("cmp_a1b…8x9y8z7");
    expect(clipMiddle(`${"🚀".repeat(10)}end`, 7)).toBe("🚀🚀🚀…end");
  });
});

describe("upstream answers", () => {
  it("keeps the last answer and the last attempt that got none, next to the metrics' hooks", () => {
    const tracker = trackUpstreamAnswers(() => new Date("2026-06-01T12:00:00Z"));
    const seen: (number | string)[] = [];
    const hooks = combineHooks({ onResponse: (event) => seen.push(event.status), onNoAnswer: (event) => seen.push(event.error) }, tracker.hooks);
    expect(tracker.last()).toEqual({ answer: null, noAnswer: null });
    hooks.onResponse?.({ endpoint: "/api/v1/leads/", method: "GET", status: 429, durationMs: 10.6, attempt: 1 });
    hooks.onRetry?.({ endpoint: "/api/v1/leads/", method: "GET", status: 429, error: "too many", attempt: 1, delayMs: 5 });
    // The last attempt of a request: no retry follows it, and it is news all the same.
    hooks.onNoAnswer?.({ endpoint: "/api/v1/replies/", method: "GET", error: "socket hang up", durationMs: 30, attempt: 3, callerStopped: false });
    // A caller that stopped waiting (a shutdown) says nothing about the upstream.
    hooks.onNoAnswer?.({ endpoint: "/api/v1/leads/", method: "GET", error: "the caller stopped waiting", durationMs: 2, attempt: 1, callerStopped: true });
    expect(seen).toEqual([429, "socket hang up", "the caller stopped waiting"]);
    expect(tracker.last()).toEqual({
      answer: { at: new Date("2026-06-01T12:00:00Z"), method: "GET", endpoint: "/api/v1/leads/", status: 429, durationMs: 11 },
      noAnswer: { at: new Date("2026-06-01T12:00:00Z"), method: "GET", endpoint: "/api/v1/replies/", error: "socket hang up" },
    });
  });
});

describe("heavy reads", () => {
  it("answer with the last value at once and read the next in the background; the first read is waited for only briefly", async () => {
    let reads = 0;
    let release: (() => void) | undefined;
    const read = (): Promise<Section<number>> => {
      reads += 1;
      const value = reads;
      return new Promise((resolve) => {
        release = () => resolve({ ok: true, value });
      });
    };
    const periodic = new PeriodicRead(read, 0, 20);
    // The first read is slow: after 20 ms the caller hears that it is still running.
    await expect(periodic.get()).resolves.toMatchObject({ ok: false, pending: true });
    await expect(periodic.get()).resolves.toMatchObject({ ok: false, pending: true });
    expect(reads).toBe(1);
    release?.();
    await new Promise((resolve) => setTimeout(resolve, 0));
    // Stale (max age 0): the value comes back at once while a second read starts.
    await expect(periodic.get()).resolves.toMatchObject({ ok: true, value: 1 });
    expect(reads).toBe(2);
    release?.();
    await new Promise((resolve) => setTimeout(resolve, 0));
    await expect(periodic.get()).resolves.toMatchObject({ ok: true, value: 2 });
  });
});
