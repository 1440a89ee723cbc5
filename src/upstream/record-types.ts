import type { z } from "zod";
import {
  campaign,
  campaignListItem,
  contactList,
  domain,
  emailOpenEvent,
  emailSequence,
  lead,
  linkClickEvent,
  reply,
  workspace,
} from "./resources.ts";
import type { Lenient } from "./tolerant.ts";

/**
 * Each kind of record the upstream returns: its schema and the fields that
 * place it in the warehouse (its natural key, and the parent key an event or
 * a reply hangs from). A record is rejected only when one of these cannot be
 * read; any other field that deviates is kept as null or coerced. Where the
 * key holds more than the natural key, `identity` names the fields that tell
 * the record apart on their own (a reply's id).
 */
export const RECORD_TYPES = {
  workspaces: { schema: workspace, key: ["id"] },
  domains: { schema: domain, key: ["id"] },
  contact_lists: { schema: contactList, key: ["uid"] },
  campaigns: { schema: campaignListItem, key: ["uid"] },
  campaign_detail: { schema: campaign, key: ["uid"] },
  leads: { schema: lead, key: ["uid"] },
  replies: { schema: reply, key: ["id", "schedule_id"], identity: ["id"] },
  link_clicks: { schema: linkClickEvent, key: ["schedule_id", "link", "clicked_on"] },
  email_opens: { schema: emailOpenEvent, key: ["schedule_id", "opened_on"] },
  email_sequences: { schema: emailSequence, key: ["id"] },
} as const satisfies Record<string, { schema: z.ZodObject; key: readonly string[]; identity?: readonly string[] }>;

export type RecordTypeName = keyof typeof RECORD_TYPES;

type SchemaOf<N extends RecordTypeName> = z.infer<(typeof RECORD_TYPES)[N]["schema"]>;
type KeyOf<N extends RecordTypeName> = (typeof RECORD_TYPES)[N]["key"][number];

/** A tolerantly read record whose key fields are known to be present. */
export type Placed<T, K extends keyof T> = NonNullable<Lenient<T>> & { [P in K]: NonNullable<Lenient<T[P]>> };

/** What the client hands out for each record type. */
export type RecordOf<N extends RecordTypeName> = Placed<SchemaOf<N>, KeyOf<N> & keyof SchemaOf<N>>;
