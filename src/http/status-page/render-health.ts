import type { AccountHealth, CampaignHealth, RecordedError } from "./campaign-health.ts";
import type { FleetStatus, JobLink } from "./fleet.ts";
import { clip } from "../../clip.ts";
import { LEAD_REFRESH } from "../../sync/streams/index.ts";
import { formatAge, formatAgo, formatCount, formatDuration, formatUtc } from "./format.ts";
import { html, type SafeHtml } from "./html.ts";
import type { LastUpstreamAnswer } from "./last-answer.ts";
import type { Section, StatusSnapshot } from "./snapshot.ts";

/** The health half of the page: the fleet, its dependencies, and every campaign's sync state. */

type Tone = "ok" | "warn" | "bad" | "muted";

const badge = (tone: Tone, text: string): SafeHtml => html`<span class="badge ${tone}">${text}</span>`;

const when = (at: Date | null, now: Date): SafeHtml =>
  at === null ? html`<span class="muted">never</span>` : html`<time datetime="${at.toISOString()}" title="${formatUtc(at)}">${formatAgo(at, now)}</time>`;

export function sectionError(name: string, section: Section<unknown>): SafeHtml | null {
  if (section.ok) return null;
  if (section.pending) return html`<p class="muted">${section.error}</p>`;
  return html`<p class="section-error">could not read ${name}: ${section.error}</p>`;
}

/** For sections read in the background: how old the figures are, once that is worth saying. */
export function readAtNote(section: Section<unknown>, now: Date): SafeHtml | null {
  if (!section.ok || !section.readAt || now.getTime() - section.readAt.getTime() < 10_000) return null;
  return html`<small class="read-at">as of ${formatAgo(section.readAt, now)}</small>`;
}

function fleetBody(fleet: Section<FleetStatus> | null, now: Date): SafeHtml {
  if (fleet === null) {
    return html`<p class="muted" data-fleet="none">no queues (demo): this process syncs in-process, without Redis or workers.</p>`;
  }
  if (!fleet.ok) return html`<p class="section-error">Redis did not answer: ${fleet.error}</p>`;
  const { value } = fleet;
  const total = (pick: (queue: FleetStatus["queues"][number]) => number) => value.queues.reduce((sum, queue) => sum + pick(queue), 0);
  const pausedMs = Math.max(value.budgetPausedMs, ...value.queues.map((queue) => queue.rateLimitedMs));
  const tiles: [string, string, Tone][] = [
    ["workers", value.workers === null ? "?" : String(value.workers), value.workers === 0 ? "bad" : "ok"],
    ["waiting", formatCount(total((queue) => queue.waiting)), "muted"],
    ["active", formatCount(total((queue) => queue.active)), "muted"],
    ["failed", formatCount(total((queue) => queue.failed)), total((queue) => queue.failed) > 0 ? "warn" : "muted"],
  ];
  return html`<div class="tiles">${tiles.map(([label, number, tone]) => html`<div class="tile ${tone}"><b>${number}</b><span>${label}</span></div>`)}</div>
    <p>${pausedMs > 0 ? badge("warn", `paused for Retry-After: ${formatDuration(pausedMs)} left`) : badge("ok", "not paused")}
      ${value.queues.filter((queue) => queue.paused).map((queue) => badge("warn", `${queue.name} queue paused`))}
      ${value.keyRefusedAt === null ? null : html`<span class="badge bad">API key refused (401) ${when(new Date(value.keyRefusedAt), now)}: events held back until a discovery is not refused</span>`}</p>
    <table class="compact"><thead><tr><th>queue</th><th>workers</th><th>waiting</th><th>active</th><th>delayed</th><th>failed</th></tr></thead><tbody>
    ${value.queues.map(
      (queue) => html`<tr><td>${queue.name}</td><td>${queue.workers ?? "?"}</td><td>${queue.waiting}</td><td>${queue.active}</td><td>${queue.delayed}</td>
        <td class="${queue.failed > 0 ? "warn-text" : ""}">${queue.failed}</td></tr>`,
    )}</tbody></table>`;
}

function upstreamLine(upstream: LastUpstreamAnswer, now: Date): SafeHtml {
  const { answer, noAnswer } = upstream;
  if (noAnswer && (!answer || noAnswer.at > answer.at)) {
    return html`${badge("bad", "no answer")} ${noAnswer.method} ${noAnswer.endpoint}: ${clip(noAnswer.error, 160)} · ${when(noAnswer.at, now)}`;
  }
  if (!answer) return html`<span class="muted">no request yet from this process</span>`;
  const tone: Tone = answer.status < 400 ? "ok" : answer.status === 429 || answer.status >= 500 ? "warn" : "bad";
  return html`${badge(tone, String(answer.status))} ${answer.method} ${answer.endpoint} · ${when(answer.at, now)} · ${formatDuration(answer.durationMs)}`;
}

function checkLine(name: string, result: string | null, absent: string): SafeHtml {
  const state = result === null ? badge("muted", absent) : result === "ok" ? badge("ok", "ok") : badge("bad", clip(result, 200));
  return html`<li><span class="dep">${name}</span>${state}</li>`;
}

export function healthPanels(snapshot: StatusSnapshot): SafeHtml {
  const { dependencies, generatedAt: now } = snapshot;
  const verification = snapshot.verification.ok ? snapshot.verification.value : null;
  return html`<section class="row">
    <article class="card" id="fleet"><h2>Worker fleet</h2>${fleetBody(snapshot.fleet, now)}</article>
    <article class="card" id="dependencies"><h2>Dependencies</h2><ul class="deps">
      ${checkLine("PostgreSQL", dependencies.warehouse, "")}
      ${checkLine("Redis", dependencies.redis, "not used (demo)")}
      <li><span class="dep">Upstream</span><span data-upstream>${upstreamLine(dependencies.upstream, now)}</span></li>
      <li><span class="dep">Verify</span>${
        verification
          ? html`${badge(verification.problems.length === 0 ? "ok" : "warn", `${verification.problems.length} of ${verification.checks} checks not ok`)} · ${when(verification.finishedAt, now)}`
          : html`<span class="muted">never ran (coldsync verify, or COLDSYNC_VERIFY_EVERY)</span>`
      }</li>
    </ul><p class="muted small">Upstream: the last answer this process received.</p></article>
  </section>`;
}

function errorCell(error: RecordedError | null, now: Date): SafeHtml {
  if (!error) return html`<span class="muted">—</span>`;
  const meta = html`<small>${error.stream} · run ${error.runId} · ${when(error.at, now)}</small>`;
  if (!error.current) return html`<div class="recovered" title="${error.message}">recovered from: ${clip(error.message, 120)} ${meta}</div>`;
  return html`<div class="error" data-error title="${error.message}">${clip(error.message, 300)} ${meta}</div>`;
}

/** Short names keep a campaign's streams on two lines; the tooltip has the full name and time. */
const STREAM_LABELS: Record<string, string> = {
  campaign_detail: "detail",
  email_sequences: "sequences",
  link_clicks: "clicks",
  email_opens: "opens",
  lead_refresh: "refresh",
};

/** The order a campaign sync walks them in; streams added later go last. */
const STREAM_ORDER = ["campaign_detail", "leads", "lead_refresh", "replies", "link_clicks", "email_opens", "email_sequences"];
const streamOrder = (stream: string) => (STREAM_ORDER.includes(stream) ? STREAM_ORDER.indexOf(stream) : STREAM_ORDER.length);

function streamsCell(campaign: CampaignHealth, now: Date): SafeHtml {
  const entries = Object.entries(campaign.streams)
    // A lead refresh runs only when events need one: one that never ran is no news, and not a stream behind.
    .filter(([stream, at]) => !(stream === LEAD_REFRESH && at === null))
    .sort(([a], [b]) => streamOrder(a) - streamOrder(b) || a.localeCompare(b));
  return html`<div class="streams">${entries.map(([stream, at]) => {
    // The streams older than their rhythm allows are the ones to look at.
    const stalest = campaign.behindStreams.includes(stream);
    const title = `${stream}: ${at === null ? "never completed a scan" : `last complete scan ${formatUtc(at)}`}`;
    return html`<span class="stream${stalest ? " stale" : ""}${at === null ? " never" : ""}" title="${title}">${STREAM_LABELS[stream] ?? stream} <b>${
      at === null ? "never" : formatAge(now.getTime() - at.getTime())
    }</b></span>`;
  })}</div>`;
}

function lagCell(campaign: CampaignHealth): SafeHtml {
  const events = campaign.eventsCadenceMs === undefined ? "" : `, events ${formatDuration(campaign.eventsCadenceMs)}`;
  const cadence = html`<small>cadence ${formatDuration(campaign.cadenceMs)}${events}</small>`;
  if (campaign.freshness === "never") return html`${badge("warn", "never complete")} ${cadence}`;
  const lag = formatDuration((campaign.lagSeconds ?? 0) * 1000);
  if (campaign.freshness === "behind") return html`${badge("bad", `behind: ${lag}`)} ${cadence}`;
  return html`${lag} ${cadence}`;
}

const STATUS_TONES: Record<string, Tone> = { running: "ok", paused: "warn", failed: "bad", cancelled: "muted", complete: "muted" };

function jobCell(links: readonly JobLink[] | undefined, fleet: FleetStatus | null): SafeHtml {
  if (!fleet) return html`<span class="muted">—</span>`;
  if (!links || links.length === 0) return html`<a href="${fleet.queuePageHref}" title="no recent job of this campaign">queue</a>`;
  // With two queues of campaign jobs (leads and events rhythms), each link says which.
  return html`${links.map(
    (link) => html`<div><a href="${link.href}" data-job title="${link.label} in ${link.queue}">${links.length > 1 ? `${link.queue.replace(/^campaign-/, "")} ` : ""}job ${link.jobId}</a>${
      link.state ? html`<small class="job-state">${link.state}</small>` : null
    }</div>`,
  )}`;
}

const UP_TO_DATE = 3;

/** Problems first: a current error, then behind, then never synced; otherwise the warehouse's order. */
function attentionRank(campaign: CampaignHealth): number {
  if (campaign.lastError?.current) return 0;
  if (campaign.freshness === "behind") return 1;
  if (campaign.freshness === "never") return 2;
  return UP_TO_DATE;
}

/**
 * The rows the table shows; /api/status keeps every campaign. Thousands of rows made panels of megabytes that the
 * page swapped in every 5 s, blocking the tab for longer than that. Those needing attention go first, and are
 * capped too: an outage fails every campaign at once, exactly when the page must stay usable.
 */
const ROWS_SHOWN = { attention: 300, others: 200 };

function shownCampaigns(campaigns: CampaignHealth[]): { shown: CampaignHealth[]; hidden: number; hiddenAttention: number } {
  const ordered = campaigns.map((campaign, index) => ({ campaign, index })).sort((a, b) => attentionRank(a.campaign) - attentionRank(b.campaign) || a.index - b.index);
  const attention = ordered.filter(({ campaign }) => attentionRank(campaign) !== UP_TO_DATE).map(({ campaign }) => campaign);
  const others = ordered.filter(({ campaign }) => attentionRank(campaign) === UP_TO_DATE).map(({ campaign }) => campaign);
  const shown = [...attention.slice(0, ROWS_SHOWN.attention), ...others.slice(0, ROWS_SHOWN.others)];
  return { shown, hidden: campaigns.length - shown.length, hiddenAttention: Math.max(0, attention.length - ROWS_SHOWN.attention) };
}

/** Where the rows left out are: a line under the table, empty when every campaign is shown. */
export function moreRowsLine(hidden: number, detail: string): SafeHtml | null {
  if (hidden === 0) return null;
  return html`<p class="more" data-more>${formatCount(hidden)} more campaigns not shown${detail}: <a href="api/status">api/status</a> lists them all.</p>`;
}

function accountLine(account: AccountHealth, now: Date): SafeHtml {
  const streams = Object.entries(account.streams);
  return html`<p class="account-line"><b>Account streams</b> ${
    streams.length === 0 ? html`<span class="muted">not synced yet</span>` : streams.map(([stream, at]) => html`<span class="pill">${stream} ${when(at, now)}</span>`)
  } ${account.rejected > 0 ? badge("warn", `${account.rejected} rejected`) : null}</p>${account.lastError ? errorCell(account.lastError, now) : null}`;
}

export function campaignsPanel(snapshot: StatusSnapshot): SafeHtml {
  const now = snapshot.generatedAt;
  const failedRead = sectionError("the warehouse", snapshot.warehouse);
  if (failedRead || !snapshot.warehouse.ok) return html`<section class="card" id="campaigns"><h2>Campaigns</h2>${failedRead}</section>`;
  const { campaigns, account } = snapshot.warehouse.value;
  const fleet = snapshot.fleet?.ok ? snapshot.fleet.value : null;
  const { shown, hidden, hiddenAttention } = shownCampaigns(campaigns);
  const behind = campaigns.filter((campaign) => campaign.freshness === "behind").length;
  const failing = campaigns.filter((campaign) => campaign.lastError?.current).length;
  return html`<section class="card" id="campaigns">
    <h2>Campaigns <small>${campaigns.length} · ${behind} behind · ${failing} failing</small></h2>
    ${accountLine(account, now)}
    <div class="scroll"><table class="campaigns"><thead><tr>
      <th>campaign</th><th>status</th><th>last complete sync</th><th>lag</th><th class="num">leads</th><th class="num">replies</th><th class="num">clicks</th>
      <th class="num">opens</th><th class="num">rejected</th><th class="num" title="live rows with a field that deviated from the spec">field issues</th><th>last error</th><th>jobs</th>
    </tr></thead><tbody>
    ${shown.map((campaign) => {
      const rowClass = campaign.lastError?.current ? "failing" : campaign.freshness === "behind" ? "behind" : "";
      return html`<tr class="${rowClass}" data-campaign="${campaign.uid}">
        <td class="name"><span dir="auto" title="${campaign.name ?? ""}">${campaign.name ?? "(no name)"}</span><code title="${campaign.uid}">${campaign.uid}</code></td>
        <td>${badge(STATUS_TONES[campaign.status ?? ""] ?? "muted", campaign.status ?? "unknown")}</td>
        <td>${streamsCell(campaign, now)}</td>
        <td class="lag">${lagCell(campaign)}</td>
        <td class="num">${formatCount(campaign.rows.leads)}</td><td class="num">${formatCount(campaign.rows.replies)}</td>
        <td class="num">${formatCount(campaign.rows.link_clicks)}</td><td class="num">${formatCount(campaign.rows.email_opens)}</td>
        <td class="num ${campaign.rejected > 0 ? "warn-text" : ""}">${formatCount(campaign.rejected)}</td>
        ${fieldIssuesCell(snapshot, campaign.uid)}
        <td class="last-error">${errorCell(campaign.lastError, now)}</td>
        <td class="jobs">${jobCell(fleet?.campaignJobs[campaign.uid], fleet)}</td>
      </tr>`;
    })}
    </tbody></table></div>
    ${moreRowsLine(hidden, hiddenAttention > 0 ? `, ${formatCount(hiddenAttention)} of them needing attention` : " (all up to date)")}
    <p class="muted small">Behind: the stalest stream's last complete scan is older than the status's cadence plus one discovery period (${formatDuration(snapshot.cadence.discoverEveryMs)}) and 5 min.
      Problems are listed first.</p>
  </section>`;
}

/** From the data-quality counts, which are read in the background with the other scans of whole tables. */
function fieldIssuesCell(snapshot: StatusSnapshot, campaignUid: string): SafeHtml {
  if (!snapshot.quality.ok) return html`<td class="num muted">—</td>`;
  const rows = snapshot.quality.value.fieldIssueRowsPerCampaign[campaignUid] ?? 0;
  return html`<td class="num ${rows > 0 ? "warn-text" : ""}">${formatCount(rows)}</td>`;
}
