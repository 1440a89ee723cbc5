import type { FastifyPluginAsync } from "fastify";
import { PARAMS, PATHS } from "../../upstream/endpoints.ts";
import { campaignPageQuery, campaignUidQuery } from "../../upstream/requests.ts";
import { arriveLateEvent, arriveSubMillisecondEvents } from "../arrivals.ts";
import { accountOf, type EmulatorContext } from "../http/context.ts";
import { serveAll, servePage, type ListingSource } from "../http/serving.ts";
import { findCampaign } from "../http/lookup.ts";
import { parseOr400 } from "../http/validation.ts";
import type { Collection } from "../store/collection.ts";
import type { CampaignRecord } from "../store/model.ts";
import { removeClick, removeOpen } from "../store/removals.ts";
import { renderClickEvent, renderOpenEvent, renderReply } from "../store/render.ts";

/** A campaign's activity: replies (#13, a bare array), link clicks (#14) and opens (#15), both paginated. */
export const eventRoutes: FastifyPluginAsync<EmulatorContext> = async (app, context) => {
  const { world, faults } = context;

  app.get(PATHS.replies, async (request) => {
    const query = parseOr400(campaignUidQuery, request.query, "query");
    return serveAll(context, PATHS.replies, findCampaign(accountOf(request), query[PARAMS.campaignUid]).replies, renderReply);
  });

  /** Link clicks and opens: paginated, and subject to the listing faults of their kind. */
  const eventListing = <T>(endpoint: string, kind: "click" | "open", source: Pick<ListingSource<T>, "render" | "remove">, of: (campaign: CampaignRecord) => Collection<T>) =>
    app.get(endpoint, async (request) => {
      const query = parseOr400(campaignPageQuery, request.query, "query");
      const campaign = findCampaign(accountOf(request), query[PARAMS.campaignUid]);
      return servePage(context, request, query, {
        ...source,
        endpoint,
        collection: of(campaign),
        insert: () => arriveLateEvent(world, campaign, kind, faults.content),
        addSubMillisecondEvents: () => arriveSubMillisecondEvents(world, campaign, kind, faults.content),
      });
    });

  eventListing(PATHS.linkClickEvents, "click", { render: renderClickEvent, remove: removeClick }, (campaign) => campaign.clicks);
  eventListing(PATHS.emailOpenEvents, "open", { render: renderOpenEvent, remove: removeOpen }, (campaign) => campaign.opens);
};
