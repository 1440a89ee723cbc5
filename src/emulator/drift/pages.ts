import { DEFAULT_PAGE_DRIFT_KINDS, PAGE_DRIFT_KINDS, type DriftMode, type PageDriftKind, type RuntimeSettings } from "../options.ts";
import { Random, hash32 } from "../random.ts";

/**
 * Page-level drift on the paginated listings (#1, #11, #14–#17): drawn per
 * page request from a stream of its own, seeded by the emulator's seed, so
 * the n-th page request meets the same deviation on every run. Nothing is
 * stored: the next request of the same page is drawn anew.
 *
 * - page-cap: fewer records than `limit` although more remain (capped at 50,
 *   25, or half a smaller limit); `total` stays right.
 * - total-off: `total` off by 1..3 (never below 0) on this one answer.
 * - page-repeat: the page starts one record early, so its first record is
 *   the last one of the page before, and it holds `limit` records: a walk
 *   that advances by the page's length skips one record, one that advances
 *   by the records it had not seen does not.
 * - total-missing: the answer announces no usable total: `total` left out,
 *   `total: null`, or a bare array of the records instead of the envelope.
 *   In play only when named in `driftKinds` (DEFAULT_PAGE_DRIFT_KINDS).
 */

const RATES: Record<DriftMode, number> = { none: 0, mild: 0.03, wild: 0.15 };

export interface PageDeviation {
  kind: PageDriftKind;
  /** For total-off: how far the total is off, ±1..3; for total-missing, its size picks the form (pageBody). */
  shift: number;
}

/** What a page request serves: the window of the listing and the total it announces. */
export interface PageWindow {
  offset: number;
  limit: number;
  total: number;
}

export class PageDrift {
  private readonly random: Random;

  constructor(seed: number) {
    this.random = new Random(hash32(seed, 0xd1_f7, 0x9a_6e));
  }

  /** Drawn once per paginated listing request while drift is on and a page kind is active. */
  draw(settings: RuntimeSettings): PageDeviation | undefined {
    if (settings.drift === "none") return undefined;
    const selected = settings.driftKinds;
    const kinds = selected ? PAGE_DRIFT_KINDS.filter((kind) => selected.includes(kind)) : DEFAULT_PAGE_DRIFT_KINDS;
    if (kinds.length === 0 || !this.random.chance(RATES[settings.drift])) return undefined;
    const kind = this.random.pick(kinds);
    const size = this.random.int(1, 3);
    return { kind, shift: this.random.chance(0.5) ? size : -size };
  }
}

/** The window a deviation serves instead of the asked one; unchanged when the deviation cannot show here. */
export function deviatePage(deviation: PageDeviation | undefined, asked: PageWindow): PageWindow {
  const { offset, limit, total } = asked;
  switch (deviation?.kind) {
    case "page-cap": {
      const cap = limit > 50 ? 50 : limit > 25 ? 25 : Math.ceil(limit / 2);
      // Only when the page would hold more than the cap, so that records remain after it.
      return Math.min(limit, total - offset) > cap ? { offset, limit: cap, total } : asked;
    }
    case "total-off": {
      const shifted = total + deviation.shift;
      return { offset, limit, total: shifted >= 0 ? shifted : total - deviation.shift };
    }
    case "page-repeat":
      return offset > 0 && offset < total ? { offset: offset - 1, limit, total } : asked;
    case "total-missing":
    case undefined:
      return asked;
  }
}

/** A page's body as served: the {data, total} envelope, or, for total-missing, one without a usable total. */
export function pageBody(deviation: PageDeviation | undefined, data: unknown[], total: number): PageBody {
  if (deviation?.kind !== "total-missing") return { data, total };
  const form = Math.abs(deviation.shift);
  return form === 1 ? { data } : form === 2 ? { data, total: null } : data;
}

/** The {data, total} envelope (spec 4.1), or what total-missing serves instead. */
export type PageBody = { data: unknown[]; total?: number | null } | unknown[];
