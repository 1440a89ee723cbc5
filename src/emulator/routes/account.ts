import type { FastifyPluginAsync } from "fastify";
import { PATHS } from "../../upstream/endpoints.ts";
import { accountOf, type EmulatorContext } from "../http/context.ts";
import { deleteDomainIfUnused } from "../deletions.ts";
import { serveAll } from "../http/serving.ts";
import { removeContactList } from "../store/removals.ts";
import { renderContactList, renderDomain, renderWorkspace } from "../store/render.ts";
import { listWorkspaceScoped } from "./workspace-listing.ts";

/** What an account holds besides campaigns: sending domains (#16), contact lists (#17), workspaces (#18). */
export const accountRoutes: FastifyPluginAsync<EmulatorContext> = async (app, context) => {
  const { settings } = context;

  app.get(PATHS.domains, async (request) => listWorkspaceScoped(context, request, PATHS.domains, "domain", (holder) => holder.domains, renderDomain, deleteDomainIfUnused));

  app.get(PATHS.contacts, async (request) =>
    listWorkspaceScoped(context, request, PATHS.contacts, "contactList", (holder) => holder.contactLists, renderContactList, removeContactList),
  );

  // Takes no parameters: a query string is ignored. The shape follows settings.workspaces (contract A.3).
  app.get(PATHS.workspaces, async (request) => {
    const workspaces = accountOf(request).workspaces;
    const records = serveAll(context, PATHS.workspaces, workspaces, renderWorkspace);
    return settings.workspaces === "envelope" ? { data: records, total: workspaces.length } : records;
  });
};
