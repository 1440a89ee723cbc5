import { RECORD_DRIFT_KINDS, type DriftEntry, type DriftMode, type RecordDriftKind, type RuntimeSettings } from "../options.ts";
import { Random, hash32, hashStep, hashText } from "../random.ts";
import { UNKNOWN_ENUM_VALUES, kindsOfField, type JsonObject, type Shape } from "./fields.ts";
import { ENDPOINT_SHAPES } from "./shapes.ts";
import { MISSING, deviate, extraFields, type Deviation } from "./values.ts";

/**
 * Record-level drift: answers deviate from the spec the way real APIs do,
 * on a seeded fraction of the records (and of their nested objects, each on
 * its own), applied to the clean rendering of each answer. Every decision is
 * a hash of the seed and the record's identity, never a draw from a stream,
 * so a record deviates the same way each time it is served:
 *
 * - per (endpoint, shape, identity): whether it deviates, and in which one
 *   or two fields, with which kind (null, missing, numeric-string,
 *   boolean-form, datetime-form, extra-field). Another endpoint serving the
 *   same record decides anew.
 * - per (entity, identity): unknown-enum, the same on every endpoint (a
 *   nested reply and the reply listing agree), as an upstream that added an
 *   enum value would serve it.
 *
 * Keys only ever change their encoding, and fields holding keyed children
 * are never removed or nulled (shapes.ts). The store and the ground truth
 * are untouched: drift exists only in the bytes of an answer.
 */

const RATES: Record<DriftMode, number> = { none: 0, mild: 0.02, wild: 0.15 };
const HASH_RANGE = 2 ** 32;
/** Share of deviating records whose deviation touches two fields rather than one. */
const TWO_FIELDS = 0.4;

/** A shape with what drift looks up for every record of it, computed once. */
interface CompiledShape {
  shape: Shape;
  nameHash: number;
  /** The entity-level hash of a record starts here (seed and entity folded in). */
  enumPrefix: number;
  children: { field: string; many: boolean; compiled: CompiledShape }[];
  fieldsByKind: Map<RecordDriftKind, string[]>;
  /** The entity's enum fields that may take an unknown value, and those values. */
  unknowns: [string, readonly string[]][];
}

/** What one answer's drift needs, decided from the settings once per answer. */
interface Pass {
  /** The endpoint-level hash of a record starts here (seed and endpoint folded in). */
  endpointPrefix: number;
  /** Hashes below this deviate at the endpoint level; below enumThreshold, at the entity level. */
  threshold: number;
  enumThreshold: number;
  /** Active kinds decided per endpoint (unknown-enum is per entity). */
  kinds: readonly RecordDriftKind[];
  /** Collected only when asked (driftOf); the served path skips the bookkeeping. */
  entries?: DriftEntry[];
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export class RecordDrift {
  private readonly salt: number;
  private readonly enumSalt: number;
  private readonly compiled = new Map<Shape, CompiledShape>();
  private readonly endpoints = new Map<string, number>();

  constructor(seed: number) {
    this.salt = hash32(seed, 0xd1_f7);
    this.enumSalt = hash32(seed, 0xe7_0a);
  }

  /**
   * What turns a clean record into the one `endpoint` serves under the current settings (the clean record
   * itself when nothing deviates). Decided once per answer, then applied to each of its records.
   */
  applier(settings: RuntimeSettings, endpoint: string): (record: unknown) => unknown {
    const pass = this.pass(settings, endpoint);
    const shape = ENDPOINT_SHAPES[endpoint];
    if (!pass || !shape) return (record) => record;
    const compiled = this.compile(shape);
    return (record) => (isObject(record) ? this.object(pass, compiled, record, 0, undefined) : record);
  }

  /** The deviations `endpoint` gives this clean record under the current settings (what apply() changes). */
  plan(settings: RuntimeSettings, endpoint: string, record: unknown): DriftEntry[] {
    const entries: DriftEntry[] = [];
    const pass = this.pass(settings, endpoint, entries);
    const shape = ENDPOINT_SHAPES[endpoint];
    if (pass && shape && isObject(record)) this.object(pass, this.compile(shape), record, 0, "");
    return entries;
  }

  private pass(settings: RuntimeSettings, endpoint: string, entries?: DriftEntry[]): Pass | undefined {
    if (settings.drift === "none") return undefined;
    const selected = settings.driftKinds;
    const active = selected ? RECORD_DRIFT_KINDS.filter((kind) => selected.includes(kind)) : RECORD_DRIFT_KINDS;
    if (active.length === 0) return undefined;
    // Each active kind gets an even share of the mode's rate; unknown-enum's share is taken per entity.
    const rate = RATES[settings.drift];
    const enumShare = active.includes("unknown-enum") ? 1 / active.length : 0;
    let endpointPrefix = this.endpoints.get(endpoint);
    if (endpointPrefix === undefined) this.endpoints.set(endpoint, (endpointPrefix = hashStep(this.salt, hashText(endpoint))));
    return {
      endpointPrefix,
      threshold: rate * (1 - enumShare) * HASH_RANGE,
      enumThreshold: rate * enumShare * HASH_RANGE,
      kinds: active.filter((kind) => kind !== "unknown-enum"),
      entries,
    };
  }

  private compile(shape: Shape): CompiledShape {
    const cached = this.compiled.get(shape);
    if (cached) return cached;
    const children: CompiledShape["children"] = [];
    const fieldsByKind = new Map<RecordDriftKind, string[]>(RECORD_DRIFT_KINDS.map((kind) => [kind, []]));
    for (const [field, spec] of Object.entries(shape.fields)) {
      // Shapes nest without cycles, so children compile first.
      if (spec.type === "object" || spec.type === "array") children.push({ field, many: spec.type === "array", compiled: this.compile(spec.shape) });
      for (const kind of kindsOfField(spec)) fieldsByKind.get(kind)?.push(field);
    }
    const compiled: CompiledShape = {
      shape,
      nameHash: hashText(shape.name),
      enumPrefix: hashStep(this.enumSalt, hashText(shape.entity)),
      children,
      fieldsByKind,
      unknowns: Object.entries(UNKNOWN_ENUM_VALUES[shape.entity] ?? {}),
    };
    this.compiled.set(shape, compiled);
    return compiled;
  }

  /**
   * One object and its children. Copies only what deviates and never touches the clean record; this
   * runs for every object of an answer, so the common case (nothing deviates) allocates nothing.
   * `path` is set only when collecting entries.
   */
  private object(pass: Pass, compiled: CompiledShape, record: JsonObject, parent: number, path: string | undefined): JsonObject {
    const id = compiled.shape.identity(record, parent);
    let copy: JsonObject | undefined;
    for (const child of compiled.children) {
      const value = record[child.field];
      const childPath = path === undefined ? undefined : path + child.field;
      const childShape = child.compiled;
      if (!child.many) {
        if (!isObject(value)) continue;
        const drifted = this.object(pass, childShape, value, id, childPath === undefined ? undefined : `${childPath}.`);
        if (drifted !== value) (copy ??= { ...record })[child.field] = drifted;
      } else if (Array.isArray(value)) {
        let items: unknown[] | undefined;
        for (let index = 0; index < value.length; index++) {
          const item: unknown = value[index];
          if (!isObject(item)) continue;
          const drifted = this.object(pass, childShape, item, id, childPath === undefined ? undefined : `${childPath}[${index}].`);
          if (drifted !== item) (items ??= [...(value as unknown[])])[index] = drifted;
        }
        if (items) (copy ??= { ...record })[child.field] = items;
      }
    }
    const enumHash = pass.enumThreshold > 0 && compiled.unknowns.length > 0 ? hashStep(compiled.enumPrefix, id) : HASH_RANGE;
    const endpointHash = hashStep(hashStep(pass.endpointPrefix, compiled.nameHash), id);
    if (enumHash >= pass.enumThreshold && endpointHash >= pass.threshold) return copy ?? record;
    return this.deviateOwn(pass, compiled, record, copy ?? { ...record }, path, enumHash, endpointHash);
  }

  /** The object's own deviations, into `out` (a copy of `record`); only for the objects whose hashes fell below a threshold. */
  private deviateOwn(pass: Pass, compiled: CompiledShape, record: JsonObject, out: JsonObject, path: string | undefined, enumHash: number, endpointHash: number): JsonObject {
    const taken = new Set<string>();
    const write = (field: string, deviation: Deviation, kind: RecordDriftKind) => {
      if (deviation === undefined) return;
      if (deviation === MISSING) delete out[field];
      else out[field] = deviation.value;
      if (path !== undefined) pass.entries?.push(deviation === MISSING ? { path: path + field, kind } : { path: path + field, kind, value: deviation.value });
    };
    if (enumHash < pass.enumThreshold) {
      const random = new Random(enumHash);
      const [field, values] = random.pick(compiled.unknowns);
      if (field in record) {
        write(field, { value: random.pick(values) }, "unknown-enum");
        taken.add(field);
      }
    }
    if (endpointHash < pass.threshold) {
      const random = new Random(endpointHash);
      const kinds = pass.kinds.filter((kind) => kind === "extra-field" || (compiled.fieldsByKind.get(kind)?.length ?? 0) > 0);
      const count = random.chance(TWO_FIELDS) ? 2 : 1;
      for (let pick = 0; pick < count && kinds.length > 0; pick++) {
        const kind = random.pick(kinds);
        if (kind === "extra-field") {
          for (const [field, value] of extraFields(out, random)) write(field, { value }, kind);
          continue;
        }
        const fields = (compiled.fieldsByKind.get(kind) ?? []).filter((field) => !taken.has(field) && field in record);
        if (fields.length === 0) continue;
        const field = random.pick(fields);
        taken.add(field);
        write(field, deviate(kind, record[field], random), kind);
      }
    }
    return out;
  }
}
