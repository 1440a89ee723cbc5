import type { FastifyPluginAsync } from "fastify";
import { LIFECYCLE_PATHS, PARAMS, PATHS, type Lifecycle } from "../../upstream/endpoints.ts";
import { campaignUidQuery, lifecycleBody, updateCampaignBodySchema } from "../../upstream/requests.ts";
import { deleteCampaignIfIdle } from "../deletions.ts";
import { nestFlatFields, readBody, readJsonBody } from "../http/bodies.ts";
import { accountOf, type EmulatorContext } from "../http/context.ts";
import { badRequest, conflict } from "../http/errors.ts";
import { findCampaign } from "../http/lookup.ts";
import { serveRecord } from "../http/serving.ts";
import { requireCreated, requireStatus } from "../http/states.ts";
import { parseOr400 } from "../http/validation.ts";
import { LIFECYCLE_RULES, applyLifecycle, updateCampaign } from "../operations.ts";
import type { CampaignRecord, DomainRecord } from "../store/model.ts";
import { renderCampaign, renderCampaignListItem } from "../store/render.ts";
import { listWorkspaceScoped } from "./workspace-listing.ts";

/** Campaigns: list (#1), retrieve (#2), update (#3) and the lifecycle operations (#4–#7). */

const LIFECYCLE_VERBS: Record<Lifecycle, string> = { start: "started", pause: "paused", resume: "resumed", cancel: "cancelled" };

/**
 * Cross-checks that need the campaign (contract A.5), after the state check. A sending domain must be
 * one of the account's and not being deleted: a domain goes only when no campaign sends from it.
 */
function checkUpdateAgainst(campaign: CampaignRecord, strategy: string, sendingDomains: readonly number[], accountDomains: ReadonlyMap<number, DomainRecord>): void {
  const sequences = campaign.sequences.length;
  if (strategy === "single-message" && sequences !== 1) {
    throw badRequest(`update_data.scheduling_strategy: single-message needs exactly one email sequence; the campaign has ${sequences}`);
  }
  if (strategy !== "single-message" && sequences === 1) {
    throw badRequest(`update_data.scheduling_strategy: the campaign has exactly one email sequence, so it must be single-message`);
  }
  const unknown = sendingDomains.filter((id) => !accountDomains.has(id));
  if (unknown.length > 0) throw badRequest(`update_data.sending_domains: unknown domain id(s) ${unknown.join(", ")}`);
  const leaving = sendingDomains.filter((id) => accountDomains.get(id)?.status === "deleting");
  if (leaving.length > 0) throw badRequest(`update_data.sending_domains: domain id(s) ${leaving.join(", ")} being deleted`);
}

export const campaignRoutes: FastifyPluginAsync<EmulatorContext> = async (app, context) => {
  app.get(PATHS.campaigns, async (request) => listWorkspaceScoped(context, request, PATHS.campaigns, "campaign", (holder) => holder.campaigns, renderCampaignListItem, deleteCampaignIfIdle));

  app.get(PATHS.campaign, async (request) => {
    const query = parseOr400(campaignUidQuery, request.query, "query");
    return serveRecord(context, PATHS.campaign, renderCampaign(findCampaign(accountOf(request), query[PARAMS.campaignUid])));
  });

  app.patch(PATHS.campaign, async (request) => {
    const { encoding, value } = await readBody(request);
    const body = parseOr400(updateCampaignBodySchema(encoding), encoding === "form" ? nestFlatFields(value, "update_data", ["campaign_uid"]) : value, "body");
    const account = accountOf(request);
    const campaign = findCampaign(account, body.campaign_uid);
    requireCreated(campaign, "update");
    const domains = new Map(account.domains.items.map((domain) => [domain.id, domain]));
    checkUpdateAgainst(campaign, body.update_data.scheduling_strategy, body.update_data.sending_domains, domains);
    updateCampaign(context.world, account, campaign, body.update_data);
    return serveRecord(context, PATHS.campaign, renderCampaign(campaign));
  });

  for (const [operation, path] of Object.entries(LIFECYCLE_PATHS) as [Lifecycle, string][]) {
    app.post(path, async (request) => {
      const body = parseOr400(lifecycleBody, await readJsonBody(request), "body");
      const campaign = findCampaign(accountOf(request), body.campaign_uid);
      requireStatus(campaign, LIFECYCLE_RULES[operation].from, operation);
      if (operation === "start" && campaign.sequences.length === 0) {
        throw conflict("campaign has no email sequence; start needs at least one");
      }
      applyLifecycle(context.world, campaign, operation);
      return { message: `campaign ${campaign.uid} ${LIFECYCLE_VERBS[operation]}; it is now ${campaign.status}` };
    });
  }
};
