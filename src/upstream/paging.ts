import { PATHS } from "./endpoints.ts";
import type { Parsed } from "./parsing.ts";
import type { RecordTypeName } from "./record-types.ts";

/** The paginated listings (spec 4.1): where each lives, which record type it returns, and how it is scoped. */
export const PAGED_RESOURCES = {
  domains: { endpoint: PATHS.domains, scope: "workspace" },
  contact_lists: { endpoint: PATHS.contacts, scope: "workspace" },
  campaigns: { endpoint: PATHS.campaigns, scope: "workspace" },
  leads: { endpoint: PATHS.leads, scope: "campaign" },
  link_clicks: { endpoint: PATHS.linkClickEvents, scope: "campaign" },
  email_opens: { endpoint: PATHS.emailOpenEvents, scope: "campaign" },
} as const satisfies Partial<Record<RecordTypeName, { endpoint: string; scope: "workspace" | "campaign" }>>;

export type PagedResource = keyof typeof PAGED_RESOURCES;

export interface Page<T> extends Parsed<T> {
  /**
   * The listing's size as this answer announced it; null when it announced none usable (missing, null,
   * negative, not a number, or a bare array instead of the envelope): the records are read all the same.
   */
  total: number | null;
  offset: number;
  limit: number;
  /** When the request that got this answer was sent: the state it shows is at least this recent. */
  observedAt: Date;
  /** Length of the answer's body text, when known: what holding the page costs, before parsing. */
  bytes?: number;
  /** How the answer's records deviated from the documented array, when they did (a list keyed by index or id). */
  shape?: string;
}

export interface PageQuery {
  /** Required by the campaign-scoped listings (leads, link_clicks, email_opens). */
  campaignUid?: string;
  /** Optional filter of the workspace-scoped listings (domains, contact_lists, campaigns). */
  workspaceId?: number;
  offset: number;
  limit?: number;
}

export type PagesQuery = Omit<PageQuery, "offset" | "limit"> & { startOffset?: number };

/**
 * Whether a page ends its listing. `total` alone cannot say so: upstreams cap
 * pages below the asked limit and report totals that are off by a few. A
 * listing ends at an empty page, or at a page shorter than the page size the
 * upstream has been serving once the offset has reached the total. Without a
 * total, a short page may be a capped one: only an empty page ends it.
 */
export function isLastPage(received: number, nextOffset: number, total: number | null, pageSize: number): boolean {
  return received === 0 || (total !== null && received < pageSize && nextOffset >= total);
}

/** The page size the upstream actually serves: a short page while records remain means it caps pages at that size. */
export function servedPageSize(pageSize: number, received: number, nextOffset: number, total: number | null): number {
  return total !== null && received > 0 && received < pageSize && nextOffset < total ? received : pageSize;
}
