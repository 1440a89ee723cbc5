/**
 * The upstream's paths and the names of the query parameters that carry
 * identifiers (contract A.1). This table is the one place to change when a
 * deployment's upstream spells them differently; the emulator serves from it
 * and the client requests from it.
 */

export const API_PREFIX = "/api/v1";

export const PATHS = {
  campaigns: `${API_PREFIX}/campaigns/`,
  campaign: `${API_PREFIX}/campaign/`,
  campaignStart: `${API_PREFIX}/campaign/start/`,
  campaignPause: `${API_PREFIX}/campaign/pause/`,
  campaignResume: `${API_PREFIX}/campaign/resume/`,
  campaignCancel: `${API_PREFIX}/campaign/cancel/`,
  emailSequence: `${API_PREFIX}/email-sequence/`,
  leads: `${API_PREFIX}/leads/`,
  lead: `${API_PREFIX}/lead/`,
  replies: `${API_PREFIX}/replies/`,
  linkClickEvents: `${API_PREFIX}/campaign/link-click-events/`,
  emailOpenEvents: `${API_PREFIX}/campaign/email-open-events/`,
  domains: `${API_PREFIX}/domains/`,
  contacts: `${API_PREFIX}/contacts/`,
  workspaces: `${API_PREFIX}/workspaces/`,
} as const;

export const PARAMS = {
  campaignUid: "campaign_uid",
  leadUid: "lead_uid",
  sequenceId: "id",
  workspaceId: "workspace_id",
  limit: "limit",
  offset: "offset",
} as const;

export const API_KEY_HEADER = "x-api-key";

export type Lifecycle = "start" | "pause" | "resume" | "cancel";

export const LIFECYCLE_PATHS: Record<Lifecycle, string> = {
  start: PATHS.campaignStart,
  pause: PATHS.campaignPause,
  resume: PATHS.campaignResume,
  cancel: PATHS.campaignCancel,
};
