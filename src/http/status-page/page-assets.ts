/**
 * The page's style sheet and its refresh script, inlined into the document:
 * one request loads the whole page, offline, with no build step. The script
 * only swaps in the panels the server rendered (GET status/panels); all the
 * rendering stays on the server, in one place.
 */

export const STYLE = `
:root { --bg:#f5f6f8; --card:#fff; --text:#1d2330; --muted:#6b7280; --line:#e5e7eb; --grid:#eef0f3;
  --ok:#16a34a; --warn:#d97706; --bad:#dc2626; --busy:#2563eb; --idle:#9ca3af;
  --ok-bg:#dcfce7; --warn-bg:#fef3c7; --bad-bg:#fee2e2; --muted-bg:#f3f4f6; }
@media (prefers-color-scheme: dark) {
  :root { --bg:#111418; --card:#1a1e24; --text:#e5e7eb; --muted:#9ca3af; --line:#2d333b; --grid:#252a31;
    --ok-bg:#12351f; --warn-bg:#3b2a0b; --bad-bg:#3f1616; --muted-bg:#262b33; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--text); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
header.top { display: flex; align-items: baseline; gap: 16px; padding: 14px 24px; background: var(--card); border-bottom: 1px solid var(--line); }
header.top h1 { margin: 0; font-size: 18px; }
header.top .grow { flex: 1; }
#refresh-state { font-size: 12px; color: var(--muted); }
#refresh-state.live::before { content: "●"; color: var(--ok); margin-right: 4px; }
#refresh-state.stale { color: var(--bad); }
main { padding: 16px 24px 32px; display: flex; flex-direction: column; gap: 16px; }
.row { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 16px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; min-width: 0; }


h2 { margin: 0 0 10px; font-size: 15px; }
h3 { margin: 12px 0 6px; font-size: 13px; }
h2 small, h3 small { font-weight: normal; color: var(--muted); margin-left: 6px; }
h2 small.read-at { font-style: italic; }
.muted { color: var(--muted); }
.small { font-size: 12px; }
.generated { margin: 0; font-size: 12px; color: var(--muted); }
.badge { display: inline-block; padding: 0 7px; border-radius: 9px; font-size: 12px; white-space: nowrap; }
.badge.ok { background: var(--ok-bg); color: var(--ok); }
.badge.warn { background: var(--warn-bg); color: var(--warn); }
.badge.bad { background: var(--bad-bg); color: var(--bad); }
.badge.muted { background: var(--muted-bg); color: var(--muted); }
.warn-text { color: var(--warn); font-weight: 600; }
.tiles { display: flex; gap: 10px; margin-bottom: 8px; }
.tile { flex: 1; border: 1px solid var(--line); border-radius: 6px; padding: 6px 10px; }
.tile b { display: block; font-size: 22px; }
.tile span { color: var(--muted); font-size: 12px; }
.tile.bad b { color: var(--bad); } .tile.warn b { color: var(--warn); }
ul.deps { list-style: none; margin: 0; padding: 0; }
ul.deps li { padding: 5px 0; border-bottom: 1px solid var(--grid); overflow-wrap: anywhere; }
ul.deps .dep { display: inline-block; width: 92px; color: var(--muted); }
table { border-collapse: collapse; width: 100%; }
th { text-align: left; font-weight: 600; font-size: 12px; color: var(--muted); border-bottom: 1px solid var(--line); padding: 4px 6px; white-space: nowrap; }
td { border-bottom: 1px solid var(--grid); padding: 6px; vertical-align: top; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
table.compact td { padding: 3px 6px; }
.scroll { overflow-x: auto; }
td.name { max-width: 220px; }
td.name span, td.name code { display: block; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
code { font-size: 11px; color: var(--muted); }
tr.behind td { background: var(--warn-bg); }
tr.behind td:first-child { box-shadow: inset 3px 0 var(--warn); }
tr.failing td { background: var(--bad-bg); }
tr.failing td:first-child { box-shadow: inset 3px 0 var(--bad); }
.streams { min-width: 270px; max-width: 300px; font-size: 12px; line-height: 1.9; }
.stream { display: inline-block; white-space: nowrap; margin: 0 4px 0 0; padding: 0 6px; border-radius: 9px; background: var(--muted-bg); color: var(--muted); }
.stream b { font-weight: 600; color: var(--text); }
.stream.stale, .stream.never { background: var(--bad-bg); color: var(--bad); } .stream.stale b, .stream.never b { color: var(--bad); }
td.lag { white-space: nowrap; } td.lag small { display: block; color: var(--muted); }
td.last-error { min-width: 200px; max-width: 320px; font-size: 12px; }
td.jobs { white-space: nowrap; font-size: 12px; }
td.jobs small { display: block; color: var(--muted); }
.error { color: var(--bad); overflow-wrap: anywhere; }
.recovered { color: var(--muted); overflow-wrap: anywhere; }
.error small, .recovered small { display: block; color: var(--muted); }
.account-line { margin: 0 0 8px; font-size: 12px; }
.pill { display: inline-block; margin: 0 6px 2px 0; padding: 0 6px; border: 1px solid var(--line); border-radius: 9px; }
.section-error { color: var(--bad); }
.more { margin: 6px 0 0; font-size: 12px; color: var(--muted); }
.empty { color: var(--muted); padding: 24px 0; text-align: center; }
svg.chart { width: 100%; height: auto; display: block; }
svg.chart text { font-size: 10px; fill: var(--muted); }
svg.chart .tick line { stroke: var(--grid); }
svg.chart .reference line { stroke: var(--bad); stroke-dasharray: 5 4; stroke-width: 1.5; }
svg.chart .reference text { fill: var(--bad); font-weight: 600; }
svg.chart .reference.above line { stroke-dasharray: 2 6; }
.bar-ok { fill: var(--ok); background: var(--ok); } .bar-warn { fill: var(--warn); background: var(--warn); }
.bar-bad { fill: var(--bad); background: var(--bad); } .bar-idle { fill: var(--idle); background: var(--idle); }
.bar-busy { fill: var(--busy); background: var(--busy); } .bar-plain { fill: var(--muted); background: var(--muted); }
svg rect:hover { opacity: 0.75; }
.legend { font-size: 12px; color: var(--muted); margin: 6px 0 0; }
.legend span { margin-right: 12px; } .legend i { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; vertical-align: -1px; }
svg.funnel { display: block; }
.funnel-0 { fill: #93c5fd; } .funnel-1 { fill: #60a5fa; } .funnel-2 { fill: #3b82f6; } .funnel-3 { fill: #16a34a; } .funnel-4 { fill: #15803d; }
a { color: var(--busy); }
`;

/** Polls status/panels (relative, so a reverse proxy's path prefix keeps working) and swaps it in; pauses while the tab is hidden. */
export const REFRESH_SCRIPT = `
(() => {
  const every = Number(document.body.dataset.refreshMs) || 5000;
  const panels = document.getElementById("panels");
  const state = document.getElementById("refresh-state");
  let timer;
  const schedule = () => { clearTimeout(timer); timer = setTimeout(refresh, every); };
  async function refresh() {
    if (document.hidden) return schedule();
    try {
      const response = await fetch("status/panels" + location.search, { cache: "no-store", headers: { accept: "text/html" } });
      if (!response.ok) throw new Error("HTTP " + response.status);
      panels.innerHTML = await response.text();
      state.textContent = "live, every " + every / 1000 + " s";
      state.className = "live";
    } catch (error) {
      state.textContent = "refresh failed (" + error.message + "), retrying";
      state.className = "stale";
    }
    schedule();
  }
  document.addEventListener("visibilitychange", () => { if (!document.hidden) refresh(); });
  schedule();
})();
`;
