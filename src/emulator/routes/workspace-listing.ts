import type { FastifyRequest } from "fastify";
import { PARAMS } from "../../upstream/endpoints.ts";
import { workspaceFilterQuery } from "../../upstream/requests.ts";
import { arriveAccountRecord } from "../arrivals.ts";
import { accountOf, takeInsertFault, type EmulatorContext } from "../http/context.ts";
import { findWorkspace, pageOf, type Page } from "../http/lookup.ts";
import { parseOr400 } from "../http/validation.ts";
import type { Collection } from "../store/collection.ts";
import type { WorkspaceRecord } from "../store/model.ts";
import type { Account } from "../store/world.ts";

/**
 * The workspace-scoped listings (campaigns #1, domains #16, contact lists
 * #17): the account's records, or one workspace's when workspace_id filters.
 * A drawn insert fault first adds a record of that kind, to the filtered
 * workspace or to one picked at random.
 */
export function listWorkspaceScoped<T, R>(
  context: EmulatorContext,
  request: FastifyRequest,
  kind: "campaign" | "domain" | "contactList",
  collectionOf: (holder: Account | WorkspaceRecord) => Collection<T>,
  render: (record: T) => R,
): Page<R> {
  const { world, faults } = context;
  const query = parseOr400(workspaceFilterQuery, request.query, "query");
  const account = accountOf(request);
  const workspace = findWorkspace(account, query[PARAMS.workspaceId]);
  if (takeInsertFault(request)) arriveAccountRecord(world, account, kind, workspace ?? faults.content.pick(account.workspaces.items), faults.content);
  return pageOf(context, collectionOf(workspace ?? account), query, render);
}
