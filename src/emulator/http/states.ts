import type { CampaignStatus } from "../../upstream/enums.ts";
import type { CampaignRecord } from "../store/model.ts";
import { conflict } from "./errors.ts";

/** Operations a campaign allows only in some of its states answer 409 elsewhere, naming both states (contract A.2, A.4). */

function statesText(states: readonly CampaignStatus[]): string {
  return states.length === 1 ? `state ${states[0]}` : `states ${states.join(", ")}`;
}

/** `action` completes "… is allowed only in …", e.g. "update" or "deleting an email sequence". */
export function requireStatus(campaign: CampaignRecord, allowed: readonly CampaignStatus[], action: string): void {
  if (!allowed.includes(campaign.status)) throw conflict(`campaign is ${campaign.status}; ${action} is allowed only in ${statesText(allowed)}`);
}

/** Updates and email-sequence changes (contract A.2). */
export function requireCreated(campaign: CampaignRecord, action: string): void {
  requireStatus(campaign, ["created"], action);
}
