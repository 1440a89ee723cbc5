import type { RecordOf } from "../../upstream/client.ts";
import { workspace } from "../../upstream/resources.ts";
import { issuesAt } from "../../upstream/tolerant.ts";
import { instant, unknownFields, withoutUnreadable } from "../mapping.ts";
import type { ListStream } from "../stream.ts";

export const workspaces: ListStream<RecordOf<"workspaces">> = {
  name: "workspaces",
  kind: "list",
  scope: "account",
  fetch: (client, _scope, signal) => client.listWorkspaces(signal),
  key: (record) => String(record.id),
  rows: ({ value: record, issues }, { scope }) => ({
    workspaces: [
      withoutUnreadable(
        {
          id: record.id,
          _account: scope.account,
          created_on: instant(record.created_on),
          subscription_plan: record.subscription_plan,
          name: record.name,
          credits_remaining: record.credits_remaining,
          next_renewal_date: instant(record.next_renewal_date),
          billing_period: record.billing_period,
          time_zone: record.time_zone,
          total_emails_sent: record.total_emails_sent,
          total_replies_received: record.total_replies_received,
          _extra: unknownFields(record, workspace),
          _field_issues: issuesAt(issues),
        },
        issues,
      ),
    ],
  }),
  softDelete: [{ table: "workspaces", within: (scope) => ({ _account: scope.account }), keys: (record) => [{ id: record.id }] }],
  completeness: { table: "workspaces", within: (scope) => ({ _account: scope.account }) },
};
