import type { BillingPeriod, CampaignStatus, EmailContentType, ReplyClassification, SequenceLabel } from "../../upstream/enums.ts";
import type { CampaignSettings } from "../../upstream/resources.ts";
import type { Collection } from "./collection.ts";

/**
 * The emulator's in-memory records. They are compact on purpose (a large seed
 * holds hundreds of thousands of schedules): times are epoch milliseconds,
 * parents are references, nested lists that are usually empty are null, and
 * uids of leads are derived from their ids instead of being stored. The API
 * shapes are produced from these, one page at a time, by render.ts.
 */

/** Values of a schedule's `status` (the spec shows only `created`). */
export const SCHEDULE_STATUSES = ["created", "sent", "bounced", "cancelled"] as const;
type ScheduleStatus = (typeof SCHEDULE_STATUSES)[number];

/** Values of a domain's `status` (the spec shows only `creating`). */
export const DOMAIN_STATUSES = ["creating", "verifying", "active", "failed", "deleting"] as const;
export type DomainStatus = (typeof DOMAIN_STATUSES)[number];

type NamingStrategy = "random" | "custom";
export const SUBSCRIPTION_PLANS = ["free", "starter", "growth", "scale", "enterprise"] as const;
export type SubscriptionPlan = (typeof SUBSCRIPTION_PLANS)[number];
export const CONTACT_LIST_STATUSES = ["processing", "ready", "failed"] as const;
export const CONTACT_LIST_SOURCES = ["csv_upload", "api", "integration", "manual"] as const;

export interface Sender {
  email: string;
  name: string;
}

export interface WorkspaceRecord {
  id: number;
  createdOn: number;
  subscriptionPlan: SubscriptionPlan;
  name: string;
  creditsRemaining: number;
  /** When the plan renews (credits are restored); free plans renew their free allowance the same way. */
  nextRenewalDate: number;
  billingPeriod: BillingPeriod;
  timeZone: string;
  totalEmailsSent: number;
  totalRepliesReceived: number;
  campaigns: Collection<CampaignRecord>;
  domains: Collection<DomainRecord>;
  contactLists: Collection<ContactListRecord>;
  /** Contacts of the workspace; leads of several campaigns may share one. */
  contacts: ContactRecord[];
  senders: Sender[];
}

export interface DomainRecord {
  id: number;
  workspace: WorkspaceRecord;
  domain: string;
  status: DomainStatus;
  createdOn: number;
  deletionStartedOn: number | null;
  setupComplete: boolean;
  namingStrategy: NamingStrategy;
  customName: string;
  warmupDaysRemaining: number;
  redirectSubdomainsTo: string;
  warmupActiveDays: number;
}

export interface ContactListRecord {
  serial: number;
  uid: string;
  workspace: WorkspaceRecord;
  name: string;
  createdOn: number;
  status: string;
  source: string;
  availableColumns: unknown;
  hasUnsubscribeColumn: boolean;
  unsubscribeColumnName: string;
}

export interface CampaignRecord {
  serial: number;
  uid: string;
  workspace: WorkspaceRecord;
  createdOn: number;
  scheduledStart: number | null;
  settings: CampaignSettings;
  status: CampaignStatus;
  bounces: number;
  paused: boolean;
  pausedOn: number | null;
  generatingSchedules: boolean;
  deletingSchedules: boolean;
  archived: boolean;
  bounceBlocked: boolean;
  startedRunningAt: number | null;
  completedAt: number | null;
  cancelledAt: number | null;
  contactLists: ContactListRecord[];
  /** Sorted by (order, id): the order in which a lead receives them. */
  sequences: SequenceRecord[];
  leads: Collection<LeadRecord>;
  replies: Collection<ReplyRecord>;
  /** Event listings, kept sorted by event time. */
  clicks: Collection<ClickRecord>;
  opens: Collection<OpenRecord>;
  /** Unsent schedules sorted by time, rebuilt after (re)planning; null when stale. */
  sendQueue: ScheduleRecord[] | null;
  sendQueueHead: number;
}

export interface SequenceRecord {
  id: number;
  campaign: CampaignRecord;
  subject: string;
  body: string;
  order: number;
  nextMessageDays: number;
  score: number;
  verdict: string;
  suggestions: unknown;
  label: SequenceLabel;
  blockedReason: string;
  flaggedForApproval: boolean;
  blockApproval: boolean;
  contentType: EmailContentType;
  /** Links a recipient can click, taken from the body. */
  links: string[];
}

export interface ContactRecord {
  id: number;
  email: string;
  bounced: boolean;
  unsubscribed: boolean;
  /**
   * When an unsubscribe already decided (at a send) takes effect. Sends are played in time order, their
   * activity delivered after them, so a send checks this rather than `unsubscribed`, which flips only when the
   * clock reaches it.
   */
  unsubscribesAt?: number;
}

export interface LeadRecord {
  id: number;
  campaign: CampaignRecord;
  contact: ContactRecord;
  sender: Sender;
  schedules: ScheduleRecord[];
}

export interface ScheduleRecord {
  id: number;
  lead: LeadRecord;
  sequence: SequenceRecord;
  status: ScheduleStatus;
  at: number;
  sentOn: number | null;
  openCount: number;
  firstOpenedOn: number | null;
  /** Microseconds past firstOpenedOn's millisecond, when the first open was recorded that precisely. */
  firstOpenedMicros?: number;
  lastOpenedOn: number | null;
  clicks: ClickRecord[] | null;
  replies: ReplyRecord[] | null;
}

export interface ReplyRecord {
  id: number;
  schedule: ScheduleRecord;
  bodyPlainText: string;
  bodyHtml: string;
  receivedOn: number;
  mailFrom: string;
  subject: string;
  classification: ReplyClassification;
}

/**
 * Event times are epoch milliseconds. A few events (the sub-millisecond fault) are recorded to the
 * microsecond: `micros` (1..999) is then the part past the millisecond, and the time renders with six
 * fraction digits. Absent on every other event, so they cost nothing.
 */
export interface ClickRecord {
  id: number;
  schedule: ScheduleRecord;
  link: string;
  clickedOn: number;
  micros?: number;
}

export interface OpenRecord {
  /** Never served; ranks the record in shuffled listings. */
  serial: number;
  schedule: ScheduleRecord;
  openedOn: number;
  micros?: number;
}

/** Activity decided when an email is sent, delivered when the simulated clock reaches it. */
export type PendingEvent =
  | { kind: "open" | "unsubscribe"; at: number; schedule: ScheduleRecord }
  | { kind: "click"; at: number; schedule: ScheduleRecord; link: string }
  | { kind: "reply"; at: number; schedule: ScheduleRecord; classification: ReplyClassification };
