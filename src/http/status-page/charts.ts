import { html, type SafeHtml } from "./html.ts";

/**
 * Charts as inline SVG, drawn on the server: nothing to download, nothing to
 * build, they work offline and refresh with the rest of the panel. Each bar
 * carries a <title>, which browsers show as a tooltip. Colours come from CSS
 * classes (see the page's style sheet), so the charts follow its palette.
 */

export interface Bar {
  value: number;
  /** A CSS class from a fixed set (never outside text): `bar-ok`, `bar-warn`, … */
  tone: BarTone;
  /** Tooltip text. */
  title: string;
}

export type BarTone = "bar-ok" | "bar-warn" | "bar-bad" | "bar-idle" | "bar-busy" | "bar-plain";

export interface BarChartOptions {
  bars: readonly Bar[];
  /** Labels under the x axis, at bar positions. */
  xLabels: readonly { index: number; text: string }[];
  formatValue: (value: number) => string;
  /**
   * A horizontal line across the plot, e.g. the request budget. When it would
   * flatten the bars (`inScale: false`), it sits on the top edge, labelled as
   * above the scale, and the bars keep their shape.
   */
  reference?: { value: number; label: string; inScale: boolean };
  /** Room for this many bars, filled from the right, so a few bars do not grow wide (default: one slot per bar). */
  slots?: number;
  /** Bars of a non-zero value never shrink below this height, so a 50 ms run next to a 5 min one still shows. */
  minBarPx?: number;
  ariaLabel: string;
  emptyText: string;
}

const WIDTH = 640;
const HEIGHT = 190;
const MARGIN = { top: 12, right: 10, bottom: 24, left: 56 };

/** 1, 2 or 5 times a power of ten, at least `value`: axis maxima people can read. */
export function niceCeiling(value: number): number {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

const round = (value: number) => Math.round(value * 10) / 10;

export function barChart(options: BarChartOptions): SafeHtml {
  const { bars } = options;
  if (bars.length === 0) return html`<p class="empty">${options.emptyText}</p>`;
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const scaled = options.reference?.inScale ? options.reference.value * 1.08 : 0;
  const yMax = niceCeiling(Math.max(...bars.map((bar) => bar.value), scaled));
  const y = (value: number) => MARGIN.top + plotHeight - (value / yMax) * plotHeight;
  const slots = Math.max(bars.length, options.slots ?? 0);
  const offset = slots - bars.length;
  const slot = plotWidth / slots;
  const barWidth = Math.max(1, slot * 0.78);
  const minBar = options.minBarPx ?? 0;

  const ticks = [0, yMax / 2, yMax].map(
    (value) => html`<g class="tick"><line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${round(y(value))}" y2="${round(y(value))}"></line>
      <text x="${MARGIN.left - 6}" y="${round(y(value)) + 4}" text-anchor="end">${options.formatValue(value)}</text></g>`,
  );
  const rects = bars.map((bar, index) => {
    if (!(bar.value > 0) && minBar === 0) return html``;
    const height = Math.max(minBar, (bar.value / yMax) * plotHeight);
    const x = MARGIN.left + (offset + index) * slot + (slot - barWidth) / 2;
    return html`<rect class="${bar.tone}" x="${round(x)}" y="${round(MARGIN.top + plotHeight - height)}" width="${round(barWidth)}" height="${round(height)}"><title>${bar.title}</title></rect>`;
  });
  const labels = options.xLabels.map(
    (label) => html`<text class="x-label" x="${round(MARGIN.left + (offset + label.index + 0.5) * slot)}" y="${HEIGHT - 6}" text-anchor="middle">${label.text}</text>`,
  );
  let reference = html``;
  if (options.reference) {
    const above = options.reference.value > yMax;
    const at = round(y(Math.min(options.reference.value, yMax)));
    const label = above ? `${options.reference.label} ↑ above the scale` : options.reference.label;
    reference = html`<g class="reference${above ? " above" : ""}"><line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${at}" y2="${at}"></line>
        <text x="${WIDTH - MARGIN.right - 4}" y="${above ? at + 12 : at - 5}" text-anchor="end">${label}</text></g>`;
  }
  return html`<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${options.ariaLabel}" preserveAspectRatio="xMidYMid meet">
    ${ticks}${rects}${reference}${labels}</svg>`;
}

/** Evenly spaced positions for up to `count` x labels among `length` bars, the last bar always labelled. */
export function labelPositions(length: number, count: number): number[] {
  if (length === 0) return [];
  if (count <= 1) return [length - 1];
  if (length <= count) return Array.from({ length }, (_, index) => index);
  const step = (length - 1) / (count - 1);
  return Array.from({ length: count }, (_, index) => Math.round(index * step));
}

export interface FunnelStep {
  label: string;
  value: number;
}

/** One campaign's funnel as horizontal bars, each as wide as its share of the first step. */
export function funnelBars(steps: readonly FunnelStep[]): SafeHtml {
  const base = Math.max(1, steps[0]?.value ?? 0);
  const rowHeight = 11;
  const width = 160;
  const rects = steps.map((step, index) => {
    const barWidth = step.value > 0 ? Math.max(1, (step.value / base) * width) : 0;
    return html`<rect class="funnel-${index}" x="0" y="${index * rowHeight}" width="${round(barWidth)}" height="${rowHeight - 2}"><title>${step.label}: ${step.value}</title></rect>`;
  });
  return html`<svg class="funnel" viewBox="0 0 ${width} ${steps.length * rowHeight}" width="${width}" height="${steps.length * rowHeight}" role="img" aria-label="funnel">${rects}</svg>`;
}
