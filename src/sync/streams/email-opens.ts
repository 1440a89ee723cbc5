import type { EmailOpenEvent } from "../../upstream/resources.ts";
import { compositeKey, isoKey, toDate } from "../mapping.ts";
import type { PagedStream } from "../stream.ts";

const openKey = (record: EmailOpenEvent) => compositeKey(record.schedule_id, isoKey(record.opened_on));

/** A campaign's email-open events (#15): an append-only log keyed by (schedule_id, opened_on). */
export const emailOpens: PagedStream<EmailOpenEvent> = {
  name: "email_opens",
  kind: "paged",
  scope: "campaign",
  resource: "email_opens",
  checkpoint: "append",
  key: openKey,
  rows: (record, scope) => ({
    email_opens: [{ campaign_uid: scope.campaignUid ?? "", schedule_id: record.schedule_id, opened_on: toDate(record.opened_on) }],
  }),
  softDelete: [{ table: "email_opens", within: (scope) => ({ campaign_uid: scope.campaignUid ?? "" }), keys: (record) => [{ schedule_id: record.schedule_id, opened_on: toDate(record.opened_on) }] }],
  completeness: { table: "email_opens", within: (scope) => ({ campaign_uid: scope.campaignUid ?? "" }) },
};
