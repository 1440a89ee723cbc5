import { barChart, funnelBars, labelPositions, type BarTone } from "./charts.ts";
import type { Engagement } from "./engagement.ts";
import { clip } from "../../clip.ts";
import { formatClock, formatCount, formatDuration, formatRate, formatShort, formatUtc } from "./format.ts";
import { html, type SafeHtml } from "./html.ts";
import { moreRowsLine, readAtNote, sectionError } from "./render-health.ts";
import type { RunBar } from "./runs.ts";
import type { StatusSnapshot } from "./snapshot.ts";
import { deviationsOf } from "../../sync/status.ts";

/** The activity half of the page: runs, request rate, engagement and data quality. */

const OUTCOME_TONES: Record<string, BarTone> = {
  succeeded: "bar-ok",
  partial: "bar-warn",
  failed: "bar-bad",
  aborted: "bar-idle",
  running: "bar-busy",
};

function runTitle(run: RunBar, names: Map<string, string>): string {
  const scope = run.scope === null ? "whole account" : `${names.get(run.scope) ?? run.scope} (${run.scope})`;
  const lines = [
    `run ${run.id} · ${run.outcome} · ${run.trigger}`,
    scope,
    `started ${formatUtc(run.startedAt)}`,
    `${run.finishedAt ? "took" : "running for"} ${formatDuration(run.durationMs)} · ${formatCount(run.requests)} requests`,
  ];
  if (run.firstError) lines.push(`${run.errors} error(s): ${clip(run.firstError, 200)}`);
  const deviations = deviationsOf(run.fieldIssues);
  if (deviations !== "") lines.push(`deviated from the spec: ${deviations}`);
  return lines.join("\n");
}

function legend(entries: readonly [BarTone, string][]): SafeHtml {
  return html`<p class="legend">${entries.map(([tone, label]) => html`<span><i class="${tone}"></i>${label}</span>`)}</p>`;
}

function runsCard(snapshot: StatusSnapshot): SafeHtml {
  const failed = sectionError("the runs", snapshot.runs);
  const runs = snapshot.runs.ok ? snapshot.runs.value : [];
  const names = new Map((snapshot.warehouse.ok ? snapshot.warehouse.value.campaigns : []).map((campaign) => [campaign.uid, campaign.name ?? campaign.uid]));
  const chart = barChart({
    bars: runs.map((run) => ({ value: run.durationMs, tone: OUTCOME_TONES[run.outcome] ?? "bar-plain", title: runTitle(run, names) })),
    // Five labels across a full chart; fewer when a few bars sit at its right end, so they do not overlap.
    xLabels: labelPositions(runs.length, Math.ceil((5 * runs.length) / Math.max(runs.length, snapshot.shape.runs))).map((index) => ({
      index,
      text: formatClock(runs[index]?.startedAt ?? new Date(0)),
    })),
    formatValue: (ms) => (ms === 0 ? "0" : formatDuration(ms)),
    minBarPx: 2,
    slots: snapshot.shape.runs,
    ariaLabel: "duration and outcome of the last runs",
    emptyText: "no run yet",
  });
  return html`<article class="card" id="runs"><h2>Last runs <small>duration, oldest to newest (UTC)</small></h2>${failed}${chart}
    ${legend([["bar-ok", "succeeded"], ["bar-warn", "partial"], ["bar-bad", "failed"], ["bar-idle", "aborted"], ["bar-busy", "running"]])}</article>`;
}

function requestsCard(snapshot: StatusSnapshot): SafeHtml {
  const failed = sectionError("the request counts", snapshot.requests);
  if (!snapshot.requests.ok) return html`<article class="card" id="requests"><h2>Requests per minute</h2>${failed}</article>`;
  const { perMinute, budgetPerMinute } = snapshot.requests.value;
  const peak = Math.max(0, ...perMinute.map((minute) => minute.requests));
  const chart = barChart({
    bars: perMinute.map((minute) => ({
      value: minute.requests,
      tone: minute.requests > budgetPerMinute ? "bar-bad" : "bar-busy",
      title: `${formatClock(minute.minute)} UTC: ${formatCount(minute.requests)} requests`,
    })),
    xLabels: labelPositions(perMinute.length, 5).map((index) => ({ index, text: formatClock(perMinute[index]?.minute ?? new Date(0)) })),
    formatValue: formatShort,
    // A budget ten times the peak would flatten the bars; it is then marked above the scale instead.
    reference: { value: budgetPerMinute, label: `budget ${formatCount(budgetPerMinute)}/min`, inScale: peak === 0 || peak >= budgetPerMinute / 10 },
    ariaLabel: "upstream requests per minute against the rate budget",
    emptyText: "no requests",
  });
  const share = budgetPerMinute > 0 ? ` (${Math.round((peak / budgetPerMinute) * 100)} % of the budget)` : "";
  return html`<article class="card" id="requests"><h2>Requests per minute <small>last hour, all processes</small></h2>${chart}
    <p class="muted small">Peak ${formatCount(peak)}/min${share}. Each finished sync or verify run's requests (sync_runs, verifications) spread over its duration;
      a run in progress counts when it ends. Budget: COLDSYNC_RATE_LIMIT × 60.</p></article>`;
}

/** The funnel's rows, most sent first, bounded as the campaigns table's are (render-health.ts); /api/status has them all. */
const FUNNEL_ROWS = 200;

function funnelTable(data: Engagement): SafeHtml {
  if (data.funnel.length === 0) return html`<p class="empty">no campaign yet</p>`;
  const shown = data.funnel.slice(0, FUNNEL_ROWS);
  return html`<div class="scroll"><table class="funnel-table"><thead><tr><th>campaign</th><th>funnel</th><th class="num">leads</th><th class="num">sent</th>
    <th class="num">opened</th><th class="num">clicked</th><th class="num">replied</th><th class="num">positive</th><th class="num">reply rate</th></tr></thead><tbody>
    ${shown.map(
      (row) => html`<tr data-funnel="${row.uid}"><td class="name"><span dir="auto" title="${row.name ?? ""}">${row.name ?? row.uid}</span></td>
        <td>${row.sent === 0 ? html`<span class="muted small">nothing sent yet</span>` : funnelBars([
          { label: "sent", value: row.sent },
          { label: "opened", value: row.opened },
          { label: "clicked", value: row.clicked },
          { label: "replied", value: row.replied },
          { label: "positive", value: row.positive },
        ])}</td>
        <td class="num">${formatCount(row.leads)}</td><td class="num">${formatCount(row.sent)}</td><td class="num">${formatCount(row.opened)}</td>
        <td class="num">${formatCount(row.clicked)}</td><td class="num">${formatCount(row.replied)}</td><td class="num">${formatCount(row.positive)}</td>
        <td class="num">${formatRate(row.replyRate)}</td></tr>`,
    )}</tbody></table></div>${moreRowsLine(data.funnel.length - shown.length, " (those that sent fewer)")}`;
}

function repliesCard(snapshot: StatusSnapshot): SafeHtml {
  const failed = sectionError("the engagement views", snapshot.engagement);
  if (!snapshot.engagement.ok) return html`<article class="card" id="replies"><h2>Replies per day</h2>${failed}</article>`;
  const { days } = snapshot.engagement.value;
  const chart = barChart({
    bars: days.map((day) => ({
      value: day.replies,
      tone: "bar-ok",
      title: `${day.day}: ${formatCount(day.replies)} replies · ${formatCount(day.sends)} sends · ${formatCount(day.opens)} opens · ${formatCount(day.clicks)} clicks`,
    })),
    xLabels: labelPositions(days.length, 6).map((index) => ({ index, text: days[index]?.day.slice(5) ?? "" })),
    formatValue: formatShort,
    ariaLabel: "replies per day",
    emptyText: "no activity yet",
  });
  const range = days.length > 0 ? `${days[0]?.day} to ${days.at(-1)?.day} (the latest day with activity), engagement_daily` : "";
  return html`<article class="card" id="replies"><h2>Replies per day <small>${range}</small>${readAtNote(snapshot.engagement, snapshot.generatedAt)}</h2>${chart}</article>`;
}

function funnelCard(snapshot: StatusSnapshot): SafeHtml {
  const failed = sectionError("the engagement views", snapshot.engagement);
  return html`<section class="card" id="funnel"><h2>Funnel per campaign <small>campaign_funnel: sent → opened → clicked → replied → positive</small>${readAtNote(snapshot.engagement, snapshot.generatedAt)}</h2>
    ${failed}${snapshot.engagement.ok ? funnelTable(snapshot.engagement.value) : null}</section>`;
}

function qualityCard(snapshot: StatusSnapshot): SafeHtml {
  const failed = sectionError("the data-quality counts", snapshot.quality);
  if (!snapshot.quality.ok) return html`<article class="card" id="quality"><h2>Data quality</h2>${failed}</article>`;
  const { rejected, fieldIssues } = snapshot.quality.value;
  const rejectedRows = rejected.map((row) => html`<tr><td>${row.stream}</td><td class="num">${formatCount(row.records)}</td><td class="num">${formatCount(row.skipped)}</td></tr>`);
  const issueRows = fieldIssues.map((row) => html`<tr><td>${row.table_name}</td><td><code>${row.field}</code></td><td class="num">${formatCount(row.rows)}</td></tr>`);
  return html`<article class="card" id="quality"><h2>Data quality${readAtNote(snapshot.quality, snapshot.generatedAt)}</h2>
    <h3>Rejected records <small>still met (rejected_records)</small></h3>
    ${rejected.length === 0 ? html`<p class="muted">none</p>` : html`<table class="compact"><thead><tr><th>stream</th><th class="num">records</th><th class="num">below them</th></tr></thead><tbody>${rejectedRows}</tbody></table>`}
    <h3>Field issues <small>live rows per table and field (field_issues)</small></h3>
    ${fieldIssues.length === 0 ? html`<p class="muted">none</p>` : html`<table class="compact"><thead><tr><th>table</th><th>field</th><th class="num">rows</th></tr></thead><tbody>${issueRows}</tbody></table>`}
  </article>`;
}

export function activityPanels(snapshot: StatusSnapshot): SafeHtml {
  return html`<section class="row">${runsCard(snapshot)}${requestsCard(snapshot)}</section>
    <section class="row">${repliesCard(snapshot)}${qualityCard(snapshot)}</section>${funnelCard(snapshot)}`;
}
