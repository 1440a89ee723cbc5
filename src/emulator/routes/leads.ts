import type { FastifyPluginAsync } from "fastify";
import { PARAMS, PATHS } from "../../upstream/endpoints.ts";
import { campaignPageQuery, leadUidQuery } from "../../upstream/requests.ts";
import { arriveLead } from "../arrivals.ts";
import { accountOf, type EmulatorContext } from "../http/context.ts";
import { servePage, serveRecord } from "../http/serving.ts";
import { findCampaign, findLead } from "../http/lookup.ts";
import { parseOr400 } from "../http/validation.ts";
import { removeLead } from "../store/removals.ts";
import { renderLead } from "../store/render.ts";

/** Leads: list a campaign's leads (#11), retrieve one (#12). */
export const leadRoutes: FastifyPluginAsync<EmulatorContext> = async (app, context) => {
  const { world } = context;

  app.get(PATHS.leads, async (request) => {
    const query = parseOr400(campaignPageQuery, request.query, "query");
    const account = accountOf(request);
    const campaign = findCampaign(account, query[PARAMS.campaignUid]);
    return servePage(context, request, query, {
      endpoint: PATHS.leads,
      collection: campaign.leads,
      render: (lead) => renderLead(world, lead),
      insert: () => arriveLead(world, account, campaign, context.faults.content),
      remove: (lead) => removeLead(account, lead),
    });
  });

  app.get(PATHS.lead, async (request) => {
    const uid = parseOr400(leadUidQuery, request.query, "query")[PARAMS.leadUid];
    return serveRecord(context, PATHS.lead, renderLead(world, findLead(world, accountOf(request), uid)));
  });
};
