import type { z } from "zod";
import { PATHS } from "./endpoints.ts";
import type { Parsed, Stream } from "./parsing.ts";
import { campaignListItem, contactList, domain, emailOpenEvent, lead, linkClickEvent } from "./resources.ts";

/** The paginated listings (spec 4.1): where each lives, what its records look like, and how it is scoped. */
export const PAGED_RESOURCES = {
  domains: { endpoint: PATHS.domains, schema: domain, scope: "workspace" },
  contact_lists: { endpoint: PATHS.contacts, schema: contactList, scope: "workspace" },
  campaigns: { endpoint: PATHS.campaigns, schema: campaignListItem, scope: "workspace" },
  leads: { endpoint: PATHS.leads, schema: lead, scope: "campaign" },
  link_clicks: { endpoint: PATHS.linkClickEvents, schema: linkClickEvent, scope: "campaign" },
  email_opens: { endpoint: PATHS.emailOpenEvents, schema: emailOpenEvent, scope: "campaign" },
} as const satisfies Record<string, { endpoint: string; schema: z.ZodType; scope: "workspace" | "campaign" }>;

export type PagedResource = keyof typeof PAGED_RESOURCES & Stream;
export type RecordOf<R extends PagedResource> = z.infer<(typeof PAGED_RESOURCES)[R]["schema"]>;

export interface Page<T> extends Parsed<T> {
  total: number;
  offset: number;
  limit: number;
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
