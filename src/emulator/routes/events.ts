import type { FastifyPluginAsync } from "fastify";
import { PARAMS, PATHS } from "../../upstream/endpoints.ts";
import { campaignPageQuery, campaignUidQuery } from "../../upstream/requests.ts";
import { arriveLateEvent, arriveSubMillisecondEvents } from "../arrivals.ts";
import { accountOf, type EmulatorContext } from "../http/context.ts";
import { serveAll, servePage } from "../http/serving.ts";
import { findCampaign } from "../http/lookup.ts";
import { parseOr400 } from "../http/validation.ts";
import { removeClick, removeOpen } from "../store/removals.ts";
import { renderClickEvent, renderOpenEvent, renderReply } from "../store/render.ts";

/** A campaign's activity: replies (#13, a bare array), link clicks (#14) and opens (#15), both paginated. */
export const eventRoutes: FastifyPluginAsync<EmulatorContext> = async (app, context) => {
  const { world, faults } = context;

  app.get(PATHS.replies, async (request) => {
    const query = parseOr400(campaignUidQuery, request.query, "query");
    return serveAll(context, PATHS.replies, findCampaign(accountOf(request), query[PARAMS.campaignUid]).replies, renderReply);
  });

  app.get(PATHS.linkClickEvents, async (request) => {
    const query = parseOr400(campaignPageQuery, request.query, "query");
    const campaign = findCampaign(accountOf(request), query[PARAMS.campaignUid]);
    return servePage(context, request, query, {
      endpoint: PATHS.linkClickEvents,
      collection: campaign.clicks,
      render: renderClickEvent,
      insert: () => arriveLateEvent(world, campaign, "click", faults.content),
      remove: (click) => removeClick(click),
      addSubMillisecondEvents: () => arriveSubMillisecondEvents(world, campaign, "click", faults.content),
    });
  });

  app.get(PATHS.emailOpenEvents, async (request) => {
    const query = parseOr400(campaignPageQuery, request.query, "query");
    const campaign = findCampaign(accountOf(request), query[PARAMS.campaignUid]);
    return servePage(context, request, query, {
      endpoint: PATHS.emailOpenEvents,
      collection: campaign.opens,
      render: renderOpenEvent,
      insert: () => arriveLateEvent(world, campaign, "open", faults.content),
      remove: (open) => removeOpen(open),
      addSubMillisecondEvents: () => arriveSubMillisecondEvents(world, campaign, "open", faults.content),
    });
  });
};
