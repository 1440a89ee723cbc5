import { isDeepStrictEqual } from "node:util";
import { sql, type Kysely } from "kysely";
import { z } from "zod";
import { TRUTH_ENTITIES, type DriftEntry, type RecordDriftKind, type TruthEntity } from "../../src/emulator/options.ts";
import type { RunningEmulator } from "../../src/emulator/server.ts";
import { PATHS } from "../../src/upstream/endpoints.ts";
import { parseInstant } from "../../src/upstream/instant.ts";
import * as resources from "../../src/upstream/resources.ts";
import type { Database } from "../../src/warehouse/database.ts";
import { Api, clickKey, openKey, snapshotAccount, type AccountSnapshot } from "./emulator.ts";
import { KEY_SQL } from "./truth.ts";

/**
 * Support for the drift tests (test/sync/drift.test.ts): what the emulator
 * served cleanly, which deviations it gave each record (driftOf), and a
 * warehouse compared row by row and column by column with a reference
 * warehouse synced from the clean rendering of the same data.
 */

export type Json = Record<string, unknown>;
type Issue = { reason: string; raw: unknown; first_seen_at: string };
/** `_field_issues`: per source, per dotted path relative to the row. */
export type FieldIssues = Record<string, Record<string, Issue>>;

/** Every synced table: the ground truth's entities. */
export const SYNCED_ENTITIES: readonly TruthEntity[] = TRUTH_ENTITIES;

/** Columns that say when and how a row was written, not what the upstream holds. */
const BOOKKEEPING = new Set(["_synced_at", "_first_seen_at", "_deleted_at", "_observed_at", "_detail_observed_at", "_field_issues", "_extra", "_account", "link_click_key", "email_open_key"]);

/** What the emulator serves with drift and faults off, read through the public API; the settings are put back afterwards. */
export async function readClean(emulator: RunningEmulator, apiKey: string): Promise<AccountSnapshot> {
  const saved = { drift: emulator.settings.drift, faults: emulator.settings.faults };
  emulator.settings.drift = "none";
  emulator.settings.faults = "none";
  try {
    return await snapshotAccount(new Api(emulator.url, apiKey));
  } finally {
    Object.assign(emulator.settings, saved);
  }
}

/** Live rows of one table of `schema`, by the ground truth's key, as JSON (timestamps as PostgreSQL renders them, to the microsecond). */
export async function liveRows(db: Kysely<Database>, schema: string, table: TruthEntity): Promise<Map<string, Json>> {
  const result = await sql<{ key: string; row: Json }>`
    select ${KEY_SQL[table]} as key, to_jsonb(t) as row from ${sql.table(`${schema}.${table}`)} t where _deleted_at is null`.execute(db);
  return new Map(result.rows.map((row) => [row.key, row.row]));
}

export type Warehouse = Record<TruthEntity, Map<string, Json>>;

export async function readWarehouse(db: Kysely<Database>, schema: string): Promise<Warehouse> {
  const entries = await Promise.all(SYNCED_ENTITIES.map(async (table) => [table, await liveRows(db, schema, table)] as const));
  return Object.fromEntries(entries) as Warehouse;
}

const issuesOf = (row: Json | undefined): FieldIssues => (row?._field_issues ?? {}) as FieldIssues;

/** Whether an issue at `path` is about `field` (the field itself, a part of it, or an object holding it). */
function names(path: string, field: string): boolean {
  return path === field || path.startsWith(`${field}.`) || field.startsWith(`${path}.`);
}

function anyIssueNames(issues: FieldIssues, fields: readonly string[]): Issue | undefined {
  for (const bySource of Object.values(issues)) {
    for (const [path, issue] of Object.entries(bySource)) if (fields.some((field) => names(path, field))) return issue;
  }
  return undefined;
}

/** The dotted paths (relative to its row) that may name a column of a table, on the row itself. */
function fieldsOfColumn(table: TruthEntity, column: string): string[] {
  if (table === "campaigns") return [column, `settings.${column}`];
  if (table === "leads" && column === "contact_id") return ["contact.id"];
  if (table === "schedules" && column === "email_sequence_id") return ["email_data.id"];
  return [column];
}

/** The column a path of a row's issues stands for, on that row, if any. */
function columnOfPath(table: TruthEntity, path: string): string | undefined {
  if (table === "campaigns" && path.startsWith("settings.")) return path.split(".")[1];
  if (table === "leads" && path === "contact.id") return "contact_id";
  if (table === "schedules" && path === "email_data.id") return "email_sequence_id";
  const [first] = path.split(".");
  return path.includes(".") && first !== "skip_days" ? undefined : first;
}

export interface ColumnDifference {
  table: TruthEntity;
  key: string;
  column: string;
  stored: unknown;
  clean: unknown;
  /** The issue that names the field, on the row or on a row that carries a copy of it; undefined when none does. */
  namedBy?: Issue;
}

/**
 * Every column of every live row of `drifted` that differs from the same row of `clean`, each with the
 * issue that names it: on the row (any source), or, for the copies a lead or a schedule carries (a
 * contact, an email sequence's subject, body and content type), on a carrying row (`contact.email_id` on
 * a lead, `email_data.subject` on a schedule). Rows the clean warehouse lacks are not compared (keys
 * are checked against the ground truth separately).
 */
export function columnDifferences(drifted: Warehouse, clean: Warehouse): ColumnDifference[] {
  const carriers = (table: TruthEntity, key: string): { rows: Json[]; prefix: string } | undefined => {
    if (table === "contacts") return { rows: [...drifted.leads.values()].filter((lead) => String(lead.contact_id) === key), prefix: "contact" };
    if (table === "email_sequences") return { rows: [...drifted.schedules.values()].filter((item) => String(item.email_sequence_id) === key), prefix: "email_data" };
    return undefined;
  };
  const differences: ColumnDifference[] = [];
  for (const table of SYNCED_ENTITIES) {
    for (const [key, row] of drifted[table]) {
      const reference = clean[table].get(key);
      if (reference === undefined) continue;
      for (const column of Object.keys(reference)) {
        if (BOOKKEEPING.has(column) || isDeepStrictEqual(row[column], reference[column])) continue;
        const fields = fieldsOfColumn(table, column);
        let namedBy = anyIssueNames(issuesOf(row), fields);
        const carried = carriers(table, key);
        if (!namedBy && carried) {
          for (const carrier of carried.rows) namedBy ??= anyIssueNames(issuesOf(carrier), fields.map((field) => `${carried.prefix}.${field}`));
        }
        differences.push({ table, key, column, stored: row[column], clean: reference[column], namedBy });
      }
    }
  }
  return differences;
}

export interface IssueCheck {
  table: TruthEntity;
  key: string;
  source: string;
  path: string;
  reason: string;
  raw: unknown;
  stored: unknown;
  clean: unknown;
}

/** Every field issue of every live row of `drifted`, with the value its row stores for it and the clean row's value (when the path stands for a column of the row). */
export function fieldIssuesWithValues(drifted: Warehouse, clean: Warehouse): IssueCheck[] {
  const checks: IssueCheck[] = [];
  for (const table of SYNCED_ENTITIES) {
    for (const [key, row] of drifted[table]) {
      for (const [source, byPath] of Object.entries(issuesOf(row))) {
        for (const [path, issue] of Object.entries(byPath)) {
          const column = columnOfPath(table, path);
          const present = column !== undefined && column in row;
          checks.push({
            table,
            key,
            source,
            path,
            reason: issue.reason,
            raw: issue.raw,
            stored: present ? row[column] : undefined,
            clean: present ? clean[table].get(key)?.[column] : undefined,
          });
        }
      }
    }
  }
  return checks;
}

/** The canonical instant of a date-time as PostgreSQL's JSON renders it or as the upstream sent it. */
export function instantOf(value: unknown): string | null {
  return typeof value === "string" ? parseInstant(value.replace(/\+00:00$/, "Z")) : null;
}

/** One deviation the emulator gave a record, placed on the warehouse row it concerns. */
export interface PlacedDeviation {
  table: TruthEntity;
  key: string;
  /** The `_field_issues` source of the stream that read it. */
  source: string;
  /** Relative to the row, dotted (what `_field_issues` names). */
  path: string;
  kind: RecordDriftKind;
  value?: unknown;
  /** Which endpoint served it (#11 and #12 are one source, `leads`). */
  endpoint: string;
  /** For what a lead carries (#11, #12): the lead's uid, since a lead's rows are written together. */
  leadUid?: string;
  /** Whether the value sent breaks the client's schema, so that a reader can tell (a null where the spec allows null, an open string set's new value, `.123000Z` cannot be told). */
  visible: boolean;
}

/** The client's schema of the records each endpoint serves (src/upstream/resources.ts). */
const SCHEMA_OF_ENDPOINT: Record<string, z.ZodType> = {
  [PATHS.workspaces]: resources.workspace,
  [PATHS.domains]: resources.domain,
  [PATHS.contacts]: resources.contactList,
  [PATHS.campaigns]: resources.campaignListItem,
  [PATHS.campaign]: resources.campaign,
  [PATHS.emailSequence]: resources.emailSequence,
  [PATHS.leads]: resources.lead,
  [PATHS.lead]: resources.lead,
  [PATHS.replies]: resources.reply,
  [PATHS.linkClickEvents]: resources.linkClickEvent,
  [PATHS.emailOpenEvents]: resources.emailOpenEvent,
};

/** The schema of the field at a drift path (`schedules[0].replies[1].reply_classification`), wrappers included. */
function schemaAt(root: z.ZodType | undefined, path: string): z.ZodType | undefined {
  let schema = root;
  for (const step of path.replace(/\[(\d+)\]/g, ".$1").split(".")) {
    while (schema instanceof z.ZodNullable || schema instanceof z.ZodOptional) schema = schema.unwrap() as z.ZodType;
    if (schema instanceof z.ZodObject) schema = schema.shape[step] as z.ZodType | undefined;
    else if (schema instanceof z.ZodArray) schema = schema.element as z.ZodType;
    else return undefined;
  }
  return schema;
}

/** Whether a reader holding the client's schemas can tell this deviation from data (see PlacedDeviation.visible). */
function isVisible(endpoint: string, entry: DriftEntry): boolean {
  if (entry.kind === "extra-field") return false;
  // Every field of the spec is required: a field left out is always a deviation.
  if (entry.kind === "missing") return true;
  const schema = schemaAt(SCHEMA_OF_ENDPOINT[endpoint], entry.path);
  return schema === undefined || !schema.safeParse(entry.value).success;
}

const SOURCE_OF_ENDPOINT: Record<string, string> = {
  [PATHS.workspaces]: "workspaces",
  [PATHS.domains]: "domains",
  [PATHS.contacts]: "contact_lists",
  [PATHS.campaigns]: "campaigns",
  [PATHS.campaign]: "campaign_detail",
  [PATHS.emailSequence]: "email_sequences",
  [PATHS.leads]: "leads",
  [PATHS.lead]: "leads",
  [PATHS.replies]: "replies",
  [PATHS.linkClickEvents]: "link_clicks",
  [PATHS.emailOpenEvents]: "email_opens",
};

type Lead = AccountSnapshot["campaigns"][number]["leads"][number];

/** A drift path inside a lead (`schedules[0].replies[1].reply_classification`) placed on its row. */
function placeInLead(lead: Lead, path: string): { table: TruthEntity; key: string; path: string } {
  const scheduleMatch = /^schedules\[(\d+)\]\.(.*)$/.exec(path);
  if (!scheduleMatch) return { table: "leads", key: lead.uid, path };
  const schedule = lead.schedules[Number(scheduleMatch[1])];
  if (!schedule) throw new Error(`drift path ${path} names no schedule of lead ${lead.uid}`);
  const rest = scheduleMatch[2] as string;
  const nested = /^(replies|link_click_events)\[(\d+)\]\.(.*)$/.exec(rest);
  if (!nested) return { table: "schedules", key: String(schedule.id), path: rest };
  const index = Number(nested[2]);
  const field = nested[3] as string;
  if (nested[1] === "replies") return { table: "replies", key: String(schedule.replies[index]?.id), path: field };
  const click = schedule.link_click_events[index];
  if (!click) throw new Error(`drift path ${path} names no click`);
  return { table: "link_clicks", key: clickKey({ schedule_id: schedule.id, link: click.link, clicked_on: click.clicked_on }), path: field };
}

/** Every record of the clean snapshot, with the endpoint that serves it and where its deviations land. */
function servedRecords(snapshot: AccountSnapshot): { endpoint: string; record: unknown; leadUid?: string; place: (path: string) => { table: TruthEntity; key: string; path: string } }[] {
  const flat = (table: TruthEntity, key: string) => (path: string) => ({ table, key, path });
  const served: ReturnType<typeof servedRecords> = [];
  for (const workspace of snapshot.workspaces) served.push({ endpoint: PATHS.workspaces, record: workspace, place: flat("workspaces", String(workspace.id)) });
  for (const domain of snapshot.domains) served.push({ endpoint: PATHS.domains, record: domain, place: flat("domains", String(domain.id)) });
  for (const list of snapshot.contactLists) served.push({ endpoint: PATHS.contacts, record: list, place: flat("contact_lists", list.uid) });
  for (const sequence of snapshot.sequences) served.push({ endpoint: PATHS.emailSequence, record: sequence, place: flat("email_sequences", String(sequence.id)) });
  for (const data of snapshot.campaigns) {
    served.push({ endpoint: PATHS.campaigns, record: data.summary, place: flat("campaigns", data.summary.uid) });
    served.push({ endpoint: PATHS.campaign, record: data.campaign, place: flat("campaigns", data.campaign.uid) });
    for (const lead of data.leads) {
      served.push({ endpoint: PATHS.leads, record: lead, leadUid: lead.uid, place: (path) => placeInLead(lead, path) });
      served.push({ endpoint: PATHS.lead, record: lead, leadUid: lead.uid, place: (path) => placeInLead(lead, path) });
    }
    for (const reply of data.replies) served.push({ endpoint: PATHS.replies, record: reply, place: flat("replies", String(reply.id)) });
    for (const click of data.clicks) served.push({ endpoint: PATHS.linkClickEvents, record: click, place: flat("link_clicks", clickKey(click)) });
    for (const open of data.opens) served.push({ endpoint: PATHS.emailOpenEvents, record: open, place: flat("email_opens", openKey(open)) });
  }
  return served;
}

/** The record-level deviations the emulator gives the clean snapshot under its current settings, placed on warehouse rows. */
export function placedDeviations(emulator: RunningEmulator, snapshot: AccountSnapshot): PlacedDeviation[] {
  const placed: PlacedDeviation[] = [];
  for (const { endpoint, record, leadUid, place } of servedRecords(snapshot)) {
    for (const entry of emulator.driftOf(endpoint, record) as DriftEntry[]) {
      placed.push({
        ...place(entry.path),
        source: SOURCE_OF_ENDPOINT[endpoint] as string,
        kind: entry.kind,
        value: entry.value,
        endpoint,
        leadUid,
        visible: isVisible(endpoint, entry),
      });
    }
  }
  return placed;
}

/** Where an extra field of a record lands: `_extra` of its row, or `_extra.settings` for a campaign's settings; copies on their own rows. */
export function extraFieldHome(deviation: PlacedDeviation, warehouse: Warehouse): { row: Json | undefined; name: string; within?: string } {
  const parts = deviation.path.split(".");
  const name = parts.at(-1) as string;
  if (deviation.table === "campaigns" && parts[0] === "settings") return { row: warehouse.campaigns.get(deviation.key), name, within: "settings" };
  if (deviation.table === "leads" && parts[0] === "contact") {
    const lead = warehouse.leads.get(deviation.key);
    return { row: warehouse.contacts.get(String(lead?.contact_id)), name };
  }
  if (deviation.table === "schedules" && parts[0] === "email_data") {
    const schedule = warehouse.schedules.get(deviation.key);
    return { row: warehouse.email_sequences.get(String(schedule?.email_sequence_id)), name };
  }
  return { row: warehouse[deviation.table].get(deviation.key), name };
}

/** The paths a row's issues name under one source, sorted (for comparing with the deviations served). */
export function issuePaths(row: Json | undefined, source: string): string[] {
  return Object.keys(issuesOf(row)[source] ?? {}).sort();
}
