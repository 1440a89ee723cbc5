import type { FastifyRequest } from "fastify";
import { PARAMS } from "../../upstream/endpoints.ts";
import { workspaceFilterQuery } from "../../upstream/requests.ts";
import { arriveAccountRecord } from "../arrivals.ts";
import { accountOf, type EmulatorContext } from "../http/context.ts";
import type { PageBody } from "../drift/pages.ts";
import { servePage } from "../http/serving.ts";
import { findWorkspace } from "../http/lookup.ts";
import { parseOr400 } from "../http/validation.ts";
import type { Collection } from "../store/collection.ts";
import type { WorkspaceRecord } from "../store/model.ts";
import type { Account } from "../store/world.ts";

/**
 * The workspace-scoped listings (campaigns #1, domains #16, contact lists
 * #17): the account's records, or one workspace's when workspace_id filters.
 * A drawn insert fault first adds a record of that kind, to the filtered
 * workspace or to one picked at random; a delete fault deletes one with `remove`.
 */
export function listWorkspaceScoped<T>(
  context: EmulatorContext,
  request: FastifyRequest,
  endpoint: string,
  kind: "campaign" | "domain" | "contactList",
  collectionOf: (holder: Account | WorkspaceRecord) => Collection<T>,
  render: (record: T) => unknown,
  remove: (account: Account, record: T) => boolean,
): PageBody {
  const { world, faults } = context;
  const query = parseOr400(workspaceFilterQuery, request.query, "query");
  const account = accountOf(request);
  const workspace = findWorkspace(account, query[PARAMS.workspaceId]);
  return servePage(context, request, query, {
    endpoint,
    collection: collectionOf(workspace ?? account),
    render,
    insert: () => arriveAccountRecord(world, account, kind, workspace ?? faults.content.pick(account.workspaces.items), faults.content),
    remove: (record) => remove(account, record),
  });
}
