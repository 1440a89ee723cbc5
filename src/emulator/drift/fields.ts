import type { RecordDriftKind } from "../options.ts";

/**
 * What drift knows of a record's fields, and which kinds each may take. Keys
 * (natural and parent keys) may only change their encoding; fields that hold
 * keyed children are never touched themselves, only their children deviate.
 */

export type JsonObject = Record<string, unknown>;

type ValueType = "int" | "bool" | "datetime" | "text" | "enum" | "json";

export type FieldSpec =
  | { type: ValueType; key?: true }
  | { type: "object" | "array"; shape: Shape };

export interface Shape {
  name: string;
  /** Who the record is, wherever it is served: records of one entity share unknown enum values. */
  entity: Entity;
  /** A 32-bit identity of the record from its clean fields; `parent` is the holder's, for records without a key of their own. */
  identity: (record: JsonObject, parent: number) => number;
  fields: Record<string, FieldSpec>;
}

export type Entity = "workspace" | "domain" | "contact-list" | "campaign" | "campaign-settings" | "sequence" | "lead" | "contact" | "schedule" | "click" | "reply" | "click-event" | "open-event";

/**
 * Values the spec does not list, per entity and enum field (the closed enums
 * and the open string sets alike). An entity's unknown value is decided once
 * per record, so every endpoint serving the record agrees on it.
 */
export const UNKNOWN_ENUM_VALUES: Partial<Record<Entity, Record<string, readonly string[]>>> = {
  workspace: { billing_period: ["quarterly", "weekly"], subscription_plan: ["trial", "legacy_pro"] },
  domain: { status: ["suspended", "expired"], naming_strategy: ["sequential", "template"] },
  "contact-list": { status: ["archived", "importing"], source: ["zapier", "hubspot"] },
  campaign: { status: ["archived", "deleted", "stopped"] },
  "campaign-settings": { scheduling_strategy: ["round-robin", "ai-optimized"], unsub_link_type: ["none", "footer"] },
  sequence: { label: ["pending_review", "flagged"], email_content_type: ["text/markdown", "text/amp+html"], verdict: ["excellent", "spam_risk"] },
  schedule: { status: ["queued", "deferred", "skipped"] },
  reply: { reply_classification: ["out_of_office", "unknown", "auto_reply"] },
};

/** Which kinds each field may take, apart from unknown-enum, which is decided per entity. */
export function kindsOfField(spec: FieldSpec): readonly RecordDriftKind[] {
  switch (spec.type) {
    case "object":
    case "array":
      return [];
    case "int":
      return "key" in spec ? ["numeric-string"] : ["null", "missing", "numeric-string"];
    case "datetime":
      return "key" in spec ? ["datetime-form"] : ["null", "missing", "datetime-form"];
    case "bool":
      return ["null", "missing", "boolean-form"];
    default:
      return "key" in spec ? [] : ["null", "missing"];
  }
}
