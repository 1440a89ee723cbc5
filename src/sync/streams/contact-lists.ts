import type { RecordOf } from "../../upstream/client.ts";
import { contactList } from "../../upstream/resources.ts";
import { issuesAt } from "../../upstream/tolerant.ts";
import { instant, unknownFields, withoutUnreadable } from "../mapping.ts";
import type { PagedStream } from "../stream.ts";

export const contactLists: PagedStream<RecordOf<"contact_lists">> = {
  name: "contact_lists",
  kind: "paged",
  scope: "account",
  resource: "contact_lists",
  checkpoint: "rescan",
  key: (record) => record.uid,
  rows: ({ value: record, issues }, { scope }) => ({
    contact_lists: [
      withoutUnreadable(
        {
          uid: record.uid,
          _account: scope.account,
          workspace_id: record.workspace_id,
          name: record.name,
          created_on: instant(record.created_on),
          status: record.status,
          source: record.source,
          available_columns: record.available_columns ?? null,
          has_unsubscribe_column: record.has_unsubscribe_column,
          unsubscribe_column_name: record.unsubscribe_column_name,
          _extra: unknownFields(record, contactList),
          _field_issues: issuesAt(issues),
        },
        issues,
      ),
    ],
  }),
  softDelete: [{ table: "contact_lists", within: (scope) => ({ _account: scope.account }), keys: (record) => [{ uid: record.uid }] }],
  completeness: { table: "contact_lists", within: (scope) => ({ _account: scope.account }) },
};
