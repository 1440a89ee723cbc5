import type { Migration } from "kysely";
import * as syncedTables from "./0001_synced_tables.ts";
import * as syncState from "./0002_sync_state.ts";
import * as history from "./0003_history.ts";
import * as views from "./0004_views.ts";
import * as tolerantIngestion from "./0005_tolerant_ingestion.ts";
import * as verifications from "./0006_verifications.ts";
import * as rhythms from "./0007_rhythms_and_freshness.ts";
import * as leadCopies from "./0008_lead_copies.ts";
import * as detailObservations from "./0009_detail_observations.ts";
import * as fieldIssuesByAccount from "./0010_field_issues_by_account.ts";
import * as campaignDeletionHistory from "./0011_campaign_deletion_history.ts";
import * as funnelBouncesAndHistoryNames from "./0012_funnel_bounces_and_history_names.ts";
import * as runningRunsIndex from "./0013_running_runs_index.ts";
import * as runsWithErrorsIndexes from "./0014_runs_with_errors_indexes.ts";
import * as linkClickIdsNotUnique from "./0015_link_click_ids_not_unique.ts";
import * as contactsFollowLeadChanges from "./0016_contacts_follow_lead_changes.ts";
import * as leadAndReplyObservations from "./0017_lead_and_reply_observations.ts";
import * as contactsLiveWithTheirLeads from "./0018_contacts_live_with_their_leads.ts";
import * as verificationScope from "./0019_verification_scope.ts";
import * as historyNamesAndBounceRate from "./0020_history_names_and_bounce_rate.ts";
import * as contactRetirementWaitsForHolders from "./0021_contact_retirement_waits_for_holders.ts";
import * as historyDatedByNewestRead from "./0022_history_dated_by_newest_read.ts";
import * as contactTriggersPinSearchPath from "./0023_contact_triggers_pin_search_path.ts";
import * as runRetentionIndexes from "./0024_run_retention_indexes.ts";

/**
 * Every migration, by name, in the order they apply. Listed explicitly rather
 * than read from the directory, so the set is fixed at type-check time and
 * needs no file-system access at run time. Migrations are forward-only: a
 * change to a shipped one is a new file here.
 */
export const migrations: Record<string, Migration> = {
  "0001_synced_tables": syncedTables,
  "0002_sync_state": syncState,
  "0003_history": history,
  "0004_views": views,
  "0005_tolerant_ingestion": tolerantIngestion,
  "0006_verifications": verifications,
  "0007_rhythms_and_freshness": rhythms,
  "0008_lead_copies": leadCopies,
  "0009_detail_observations": detailObservations,
  "0010_field_issues_by_account": fieldIssuesByAccount,
  "0011_campaign_deletion_history": campaignDeletionHistory,
  "0012_funnel_bounces_and_history_names": funnelBouncesAndHistoryNames,
  "0013_running_runs_index": runningRunsIndex,
  "0014_runs_with_errors_indexes": runsWithErrorsIndexes,
  "0015_link_click_ids_not_unique": linkClickIdsNotUnique,
  "0016_contacts_follow_lead_changes": contactsFollowLeadChanges,
  "0017_lead_and_reply_observations": leadAndReplyObservations,
  "0018_contacts_live_with_their_leads": contactsLiveWithTheirLeads,
  "0019_verification_scope": verificationScope,
  "0020_history_names_and_bounce_rate": historyNamesAndBounceRate,
  "0021_contact_retirement_waits_for_holders": contactRetirementWaitsForHolders,
  "0022_history_dated_by_newest_read": historyDatedByNewestRead,
  "0023_contact_triggers_pin_search_path": contactTriggersPinSearchPath,
  "0024_run_retention_indexes": runRetentionIndexes,
};
