import type { FastifyPluginAsync } from "fastify";
import { PARAMS, PATHS } from "../../upstream/endpoints.ts";
import { campaignPageQuery, campaignUidQuery } from "../../upstream/requests.ts";
import { arriveLateEvent } from "../arrivals.ts";
import { accountOf, takeInsertFault, type EmulatorContext } from "../http/context.ts";
import { findCampaign, listAll, pageOf } from "../http/lookup.ts";
import { parseOr400 } from "../http/validation.ts";
import { renderClickEvent, renderOpenEvent, renderReply } from "../store/render.ts";

/** A campaign's activity: replies (#13, a bare array), link clicks (#14) and opens (#15), both paginated. */
export const eventRoutes: FastifyPluginAsync<EmulatorContext> = async (app, context) => {
  const { world, faults } = context;

  app.get(PATHS.replies, async (request) => {
    const query = parseOr400(campaignUidQuery, request.query, "query");
    return listAll(context, findCampaign(accountOf(request), query[PARAMS.campaignUid]).replies, renderReply);
  });

  app.get(PATHS.linkClickEvents, async (request) => {
    const query = parseOr400(campaignPageQuery, request.query, "query");
    const campaign = findCampaign(accountOf(request), query[PARAMS.campaignUid]);
    if (takeInsertFault(request)) arriveLateEvent(world, campaign, "click", faults.content);
    return pageOf(context, campaign.clicks, query, renderClickEvent);
  });

  app.get(PATHS.emailOpenEvents, async (request) => {
    const query = parseOr400(campaignPageQuery, request.query, "query");
    const campaign = findCampaign(accountOf(request), query[PARAMS.campaignUid]);
    if (takeInsertFault(request)) arriveLateEvent(world, campaign, "open", faults.content);
    return pageOf(context, campaign.opens, query, renderOpenEvent);
  });
};
