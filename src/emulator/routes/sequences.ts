import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import { PARAMS, PATHS } from "../../upstream/endpoints.ts";
import { createSequenceBodySchema, sequenceIdBody, sequenceIdQuery, type NumericId } from "../../upstream/requests.ts";
import { nestFlatFields, readBody, readJsonBody } from "../http/bodies.ts";
import { accountOf, type EmulatorContext } from "../http/context.ts";
import { badRequest } from "../http/errors.ts";
import { findCampaign, findSequence } from "../http/lookup.ts";
import { serveRecord } from "../http/serving.ts";
import { requireCreated } from "../http/states.ts";
import { parseOr400 } from "../http/validation.ts";
import { createSequence, deleteSequence } from "../operations.ts";
import { renderSequence } from "../store/render.ts";

/** Email sequences: create (#8), retrieve (#9), delete (#10). */

function namesId(query: unknown): boolean {
  return typeof query === "object" && query !== null && PARAMS.sequenceId in query;
}

/**
 * The id to delete: from the query string (contract A.1), else from a JSON body {"id": N}. The body is read either
 * way: a malformed one, or a form, is a 400 before anything is deleted.
 */
async function idToDelete(request: FastifyRequest): Promise<NumericId> {
  const value = await readJsonBody(request);
  if (namesId(request.query)) return parseOr400(sequenceIdQuery, request.query, "query")[PARAMS.sequenceId];
  if (value === undefined) throw badRequest(`${PARAMS.sequenceId}: is required, in the query string or as a JSON body {"${PARAMS.sequenceId}": N}`);
  return parseOr400(sequenceIdBody, value, "body")[PARAMS.sequenceId];
}

export const sequenceRoutes: FastifyPluginAsync<EmulatorContext> = async (app, context) => {
  app.post(PATHS.emailSequence, async (request) => {
    const { encoding, value } = await readBody(request);
    // No body at all is an empty one: each required field is named (contract A.2), not the body as a whole.
    const body = parseOr400(createSequenceBodySchema(encoding), encoding === "form" ? nestFlatFields(value, "sequence_data", ["campaign_uid"]) : (value ?? {}), "body");
    const account = accountOf(request);
    const campaign = findCampaign(account, body.campaign_uid);
    requireCreated(campaign, "creating an email sequence");
    return serveRecord(context, PATHS.emailSequence, renderSequence(createSequence(context.world, account, campaign, body.sequence_data)));
  });

  app.get(PATHS.emailSequence, async (request) => {
    const id = parseOr400(sequenceIdQuery, request.query, "query")[PARAMS.sequenceId];
    return serveRecord(context, PATHS.emailSequence, renderSequence(findSequence(accountOf(request), id)));
  });

  app.delete(PATHS.emailSequence, async (request) => {
    const id = await idToDelete(request);
    const account = accountOf(request);
    const sequence = findSequence(account, id);
    requireCreated(sequence.campaign, "deleting an email sequence");
    deleteSequence(context.world, account, sequence);
    return { message: `email sequence ${id} deleted` };
  });
};
