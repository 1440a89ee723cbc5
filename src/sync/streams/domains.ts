import type { RecordOf } from "../../upstream/client.ts";
import { domain } from "../../upstream/resources.ts";
import { issuesAt } from "../../upstream/tolerant.ts";
import { instant, unknownFields, withoutUnreadable } from "../mapping.ts";
import type { PagedStream } from "../stream.ts";

export const domains: PagedStream<RecordOf<"domains">> = {
  name: "domains",
  kind: "paged",
  scope: "account",
  resource: "domains",
  checkpoint: "rescan",
  key: (record) => String(record.id),
  rows: ({ value: record, issues }, { scope }) => ({
    domains: [
      withoutUnreadable(
        {
          id: record.id,
          _account: scope.account,
          workspace_id: record.workspace_id,
          domain: record.domain,
          status: record.status,
          created_on: instant(record.created_on),
          deletion_started_on: instant(record.deletion_started_on),
          setup_complete: record.setup_complete,
          naming_strategy: record.naming_strategy,
          custom_name: record.custom_name,
          warmup_days_remaining: record.warmup_days_remaining,
          redirect_subdomains_to: record.redirect_subdomains_to,
          warmup_active_days: record.warmup_active_days,
          _extra: unknownFields(record, domain),
          _field_issues: issuesAt(issues),
        },
        issues,
      ),
    ],
  }),
  softDelete: [{ table: "domains", within: (scope) => ({ _account: scope.account }), keys: (record) => [{ id: record.id }] }],
  completeness: { table: "domains", within: (scope) => ({ _account: scope.account }) },
};
