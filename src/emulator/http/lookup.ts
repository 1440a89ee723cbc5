import { PARAMS } from "../../upstream/endpoints.ts";
import type { NumericId } from "../../upstream/requests.ts";
import type { CampaignRecord, LeadRecord, SequenceRecord, WorkspaceRecord } from "../store/model.ts";
import type { Account, World } from "../store/world.ts";
import { notFound } from "./errors.ts";

/**
 * Lookups scoped to the request's account (an identifier of another account
 * answers exactly like an unknown one).
 */

export function findCampaign(account: Account, uid: string): CampaignRecord {
  const campaign = account.campaignsByUid.get(uid);
  if (!campaign) throw notFound(`${PARAMS.campaignUid}: no campaign "${uid}"`);
  return campaign;
}

export function findLead(world: World, account: Account, uid: string): LeadRecord {
  const lead = world.findLead(account, uid);
  if (!lead) throw notFound(`${PARAMS.leadUid}: no lead "${uid}"`);
  return lead;
}

export function findSequence(account: Account, id: NumericId): SequenceRecord {
  // A bigint id is past 2^53, so it names no sequence.
  const sequence = typeof id === "number" ? account.sequencesById.get(id) : undefined;
  if (!sequence) throw notFound(`${PARAMS.sequenceId}: no email sequence ${id}`);
  return sequence;
}

export function findWorkspace(account: Account, id: NumericId | undefined): WorkspaceRecord | undefined {
  if (id === undefined) return undefined;
  const workspace = account.workspaces.items.find((candidate) => candidate.id === id);
  if (!workspace) throw notFound(`${PARAMS.workspaceId}: no workspace ${id}`);
  return workspace;
}
