import { formatUtc } from "./format.ts";
import { html, raw, type SafeHtml } from "./html.ts";
import { REFRESH_SCRIPT, STYLE } from "./page-assets.ts";
import { activityPanels } from "./render-activity.ts";
import { campaignsPanel, healthPanels } from "./render-health.ts";
import type { StatusSnapshot } from "./snapshot.ts";

/** The status page: a document shell around the panels, which the page re-fetches on its own every few seconds. */

export function renderPanels(snapshot: StatusSnapshot): SafeHtml {
  return html`<p class="generated">read <time datetime="${snapshot.generatedAt.toISOString()}">${formatUtc(snapshot.generatedAt)}</time></p>
    ${healthPanels(snapshot)}${campaignsPanel(snapshot)}${activityPanels(snapshot)}`;
}

export interface PageOptions {
  refreshMs: number;
  /** Shown next to the title, e.g. "demo". */
  mode: string;
}

export function renderPage(snapshot: StatusSnapshot, options: PageOptions): SafeHtml {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>coldsync status · ${snapshot.account}</title>
<link rel="icon" href="data:,">
<style>${raw(STYLE)}</style>
</head>
<body data-refresh-ms="${options.refreshMs}">
<header class="top"><h1>coldsync status</h1><span>account <b>${snapshot.account}</b></span><span class="badge muted">${options.mode}</span>
  <span class="grow"></span><span id="refresh-state">live, every ${options.refreshMs / 1000} s</span>
  <a href="api/status">JSON</a></header>
<main id="panels">${renderPanels(snapshot)}</main>
<script>${raw(REFRESH_SCRIPT)}</script>
</body>
</html>`;
}
