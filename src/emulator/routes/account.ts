import type { FastifyPluginAsync } from "fastify";
import { PATHS } from "../../upstream/endpoints.ts";
import { accountOf, type EmulatorContext } from "../http/context.ts";
import { listAll } from "../http/lookup.ts";
import { renderContactList, renderDomain, renderWorkspace } from "../store/render.ts";
import { listWorkspaceScoped } from "./workspace-listing.ts";

/** What an account holds besides campaigns: sending domains (#16), contact lists (#17), workspaces (#18). */
export const accountRoutes: FastifyPluginAsync<EmulatorContext> = async (app, context) => {
  const { settings } = context;

  app.get(PATHS.domains, async (request) => listWorkspaceScoped(context, request, "domain", (holder) => holder.domains, renderDomain));

  app.get(PATHS.contacts, async (request) => listWorkspaceScoped(context, request, "contactList", (holder) => holder.contactLists, renderContactList));

  // Takes no parameters: a query string is ignored. The shape follows settings.workspaces (contract A.3).
  app.get(PATHS.workspaces, async (request) => {
    const workspaces = accountOf(request).workspaces;
    const records = listAll(context, workspaces, renderWorkspace);
    return settings.workspaces === "envelope" ? { data: records, total: workspaces.length } : records;
  });
};
