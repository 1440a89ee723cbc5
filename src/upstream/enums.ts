import { z } from "zod";

/** Enumerations of the upstream API (spec sections 2 and 3). */

export const campaignStatus = z.enum(["creating", "created", "scheduled", "running", "paused", "complete", "cancelled", "failed"]);
export type CampaignStatus = z.infer<typeof campaignStatus>;

/** States a campaign never leaves (contract A.4). */
export const TERMINAL_CAMPAIGN_STATUSES: readonly CampaignStatus[] = ["complete", "cancelled", "failed"];

export const dayName = z.enum(["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]);
export type DayName = z.infer<typeof dayName>;

export const schedulingStrategy = z.enum(["testing", "sequential", "no-followup-limit", "smart-queue", "single-message"]);
export type SchedulingStrategy = z.infer<typeof schedulingStrategy>;

/** `testing` may be read but not written (contract A.5). */
export const updatableSchedulingStrategy = schedulingStrategy.exclude(["testing"]);

export const unsubLinkType = z.enum(["auto", "custom"]);

export const sequenceLabel = z.enum(["passed", "blocked", "rejected", "approved"]);
export type SequenceLabel = z.infer<typeof sequenceLabel>;

export const emailContentType = z.enum(["text/plain", "text/html", "text/rich"]);
export type EmailContentType = z.infer<typeof emailContentType>;

export const replyClassification = z.enum(["positive", "neutral", "negative"]);
export type ReplyClassification = z.infer<typeof replyClassification>;

export const billingPeriod = z.enum(["monthly", "annual"]);
export type BillingPeriod = z.infer<typeof billingPeriod>;
