import type { FastifyPluginAsync } from "fastify";
import { LIFECYCLE_PATHS, PARAMS, PATHS, type Lifecycle } from "../../upstream/endpoints.ts";
import { campaignUidQuery, lifecycleBody, updateCampaignBodySchema, updateCrossCheckedFieldsSchema, type BodyEncoding } from "../../upstream/requests.ts";
import { deleteCampaignIfIdle } from "../deletions.ts";
import { nestFlatFields, readBody, readJsonBody } from "../http/bodies.ts";
import { accountOf, type EmulatorContext } from "../http/context.ts";
import { badRequest, conflict } from "../http/errors.ts";
import { findCampaign } from "../http/lookup.ts";
import { serveRecord } from "../http/serving.ts";
import { requireCreated, requireStatus } from "../http/states.ts";
import { parseOr400, parseOrProblems } from "../http/validation.ts";
import { LIFECYCLE_RULES, applyLifecycle, updateCampaign } from "../operations.ts";
import type { CampaignRecord, DomainRecord } from "../store/model.ts";
import { renderCampaign, renderCampaignListItem } from "../store/render.ts";
import type { Account } from "../store/world.ts";
import { listWorkspaceScoped } from "./workspace-listing.ts";

/** Campaigns: list (#1), retrieve (#2), update (#3) and the lifecycle operations (#4–#7). */

const LIFECYCLE_VERBS: Record<Lifecycle, string> = { start: "started", pause: "paused", resume: "resumed", cancel: "cancelled" };

/**
 * Cross-checks that need the campaign (contract A.5), after the state check: every problem found,
 * each naming its field. A sending domain must be one of the account's and not being deleted: a
 * domain goes only when no campaign sends from it. A field left undefined (invalid on its own, and
 * so already named) is not checked.
 */
function crossCheckProblems(campaign: CampaignRecord, strategy: string | undefined, sendingDomains: readonly number[] | undefined, accountDomains: ReadonlyMap<number, DomainRecord>): string[] {
  const problems: string[] = [];
  const sequences = campaign.sequences.length;
  if (strategy === "single-message" && sequences !== 1) {
    problems.push(`update_data.scheduling_strategy: single-message needs exactly one email sequence; the campaign has ${sequences}`);
  }
  if (strategy !== undefined && strategy !== "single-message" && sequences === 1) {
    problems.push(`update_data.scheduling_strategy: the campaign has exactly one email sequence, so it must be single-message`);
  }
  const unknown = (sendingDomains ?? []).filter((id) => !accountDomains.has(id));
  if (unknown.length > 0) problems.push(`update_data.sending_domains: unknown domain id(s) ${unknown.join(", ")}`);
  const leaving = (sendingDomains ?? []).filter((id) => accountDomains.get(id)?.status === "deleting");
  if (leaving.length > 0) problems.push(`update_data.sending_domains: domain id(s) ${leaving.join(", ")} being deleted`);
  return problems;
}

function domainsOf(account: Account): Map<number, DomainRecord> {
  return new Map(account.domains.items.map((domain) => [domain.id, domain]));
}

/**
 * The cross-checks of a body that breaks the schema, so that its 400 names them too: only when
 * the campaign it names exists and may be updated, since otherwise the body's 400 comes first and
 * the 404 or 409 would follow it (contract A.2 order).
 */
function crossCheckProblemsOfInvalid(account: Account, encoding: BodyEncoding, input: unknown): string[] {
  const fields = updateCrossCheckedFieldsSchema(encoding).parse(input);
  const campaign = fields.campaign_uid === undefined ? undefined : account.campaignsByUid.get(fields.campaign_uid);
  if (campaign?.status !== "created" || fields.update_data === undefined) return [];
  return crossCheckProblems(campaign, fields.update_data.scheduling_strategy, fields.update_data.sending_domains, domainsOf(account));
}

export const campaignRoutes: FastifyPluginAsync<EmulatorContext> = async (app, context) => {
  app.get(PATHS.campaigns, async (request) => listWorkspaceScoped(context, request, PATHS.campaigns, "campaign", (holder) => holder.campaigns, renderCampaignListItem, deleteCampaignIfIdle));

  app.get(PATHS.campaign, async (request) => {
    const query = parseOr400(campaignUidQuery, request.query, "query");
    return serveRecord(context, PATHS.campaign, renderCampaign(findCampaign(accountOf(request), query[PARAMS.campaignUid])));
  });

  app.patch(PATHS.campaign, async (request) => {
    const { encoding, value } = await readBody(request);
    // No body at all is an empty one: each required field is named (contract A.2), not the body as a whole.
    const input = encoding === "form" ? nestFlatFields(value, "update_data", ["campaign_uid"]) : (value ?? {});
    const account = accountOf(request);
    const parsed = parseOrProblems(updateCampaignBodySchema(encoding), input, "body");
    if (!("data" in parsed)) throw badRequest([parsed.problems, ...crossCheckProblemsOfInvalid(account, encoding, input)].join("; "));
    const body = parsed.data;
    const campaign = findCampaign(account, body.campaign_uid);
    requireCreated(campaign, "update");
    const problems = crossCheckProblems(campaign, body.update_data.scheduling_strategy, body.update_data.sending_domains, domainsOf(account));
    if (problems.length > 0) throw badRequest(problems.join("; "));
    updateCampaign(context.world, account, campaign, body.update_data);
    return serveRecord(context, PATHS.campaign, renderCampaign(campaign));
  });

  for (const [operation, path] of Object.entries(LIFECYCLE_PATHS) as [Lifecycle, string][]) {
    app.post(path, async (request) => {
      const body = parseOr400(lifecycleBody, (await readJsonBody(request)) ?? {}, "body");
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
