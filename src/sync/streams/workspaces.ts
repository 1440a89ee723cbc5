import { workspace, type Workspace } from "../../upstream/resources.ts";
import { toDate, unknownFields } from "../mapping.ts";
import type { ListStream } from "../stream.ts";

export const workspaces: ListStream<Workspace> = {
  name: "workspaces",
  kind: "list",
  scope: "account",
  fetch: (client, _scope, signal) => client.listWorkspaces(signal),
  rows: (record, scope) => ({
    workspaces: [
      {
        id: record.id,
        _account: scope.account,
        created_on: toDate(record.created_on),
        subscription_plan: record.subscription_plan,
        name: record.name,
        credits_remaining: record.credits_remaining,
        next_renewal_date: toDate(record.next_renewal_date),
        billing_period: record.billing_period,
        time_zone: record.time_zone,
        total_emails_sent: record.total_emails_sent,
        total_replies_received: record.total_replies_received,
        _extra: unknownFields(record, workspace),
      },
    ],
  }),
  softDelete: [{ table: "workspaces", within: (scope) => ({ _account: scope.account }), keys: (record) => [{ id: record.id }] }],
  completeness: { table: "workspaces", within: (scope) => ({ _account: scope.account }) },
};
