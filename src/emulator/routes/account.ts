import type { FastifyPluginAsync } from "fastify";
import { PARAMS, PATHS } from "../../upstream/endpoints.ts";
import { workspaceFilterQuery } from "../../upstream/requests.ts";
import { arriveAccountRecord } from "../arrivals.ts";
import { accountOf, takeInsertFault, type EmulatorContext } from "../http/context.ts";
import { findWorkspace, listAll, pageOf } from "../http/lookup.ts";
import { parseOr400 } from "../http/validation.ts";
import { renderContactList, renderDomain, renderWorkspace } from "../store/render.ts";

/** What an account holds besides campaigns: sending domains (#16), contact lists (#17), workspaces (#18). */
export const accountRoutes: FastifyPluginAsync<EmulatorContext> = async (app, context) => {
  const { world, faults, settings } = context;

  app.get(PATHS.domains, async (request) => {
    const query = parseOr400(workspaceFilterQuery, request.query, "query");
    const account = accountOf(request);
    const workspace = findWorkspace(account, query[PARAMS.workspaceId]);
    if (takeInsertFault(request)) arriveAccountRecord(world, account, "domain", workspace ?? faults.content.pick(account.workspaces.items), faults.content);
    return pageOf(context, workspace ? workspace.domains : account.domains, query, renderDomain);
  });

  app.get(PATHS.contacts, async (request) => {
    const query = parseOr400(workspaceFilterQuery, request.query, "query");
    const account = accountOf(request);
    const workspace = findWorkspace(account, query[PARAMS.workspaceId]);
    if (takeInsertFault(request)) arriveAccountRecord(world, account, "contactList", workspace ?? faults.content.pick(account.workspaces.items), faults.content);
    return pageOf(context, workspace ? workspace.contactLists : account.contactLists, query, renderContactList);
  });

  // Takes no parameters: a query string is ignored. The shape follows settings.workspaces (contract A.3).
  app.get(PATHS.workspaces, async (request) => {
    const workspaces = accountOf(request).workspaces;
    const records = listAll(context, workspaces, renderWorkspace);
    return settings.workspaces === "envelope" ? { data: records, total: workspaces.length } : records;
  });
};
