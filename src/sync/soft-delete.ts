import type { Kysely, Transaction } from "kysely";
import type { Database } from "../warehouse/database.ts";
import { markDeleted } from "../warehouse/upsert.ts";
import { naturalKeyText } from "./natural-keys.ts";
import type { SoftDeleteRule, StreamDefinition, StreamScope } from "./stream.ts";

/** The natural keys a complete scan vouched for, per soft-delete rule of the stream. */
export class SoftDeleteKeys<R> {
  readonly #rules: SoftDeleteRule<R>[];
  readonly #keys: Map<string, Record<string, unknown>>[];

  constructor(stream: StreamDefinition<R>) {
    this.#rules = stream.softDelete ?? [];
    this.#keys = this.#rules.map(() => new Map());
  }

  add(records: readonly R[]): void {
    this.#rules.forEach((rule, index) => {
      const keys = this.#keys[index] as Map<string, Record<string, unknown>>;
      for (const record of records) for (const key of rule.keys(record)) keys.set(naturalKeyText(rule.table, key), key);
    });
  }

  clear(): void {
    for (const keys of this.#keys) keys.clear();
  }

  async markMissing(db: Kysely<Database> | Transaction<Database>, scope: StreamScope, at: Date): Promise<void> {
    for (const [index, rule] of this.#rules.entries()) {
      const keys = [...(this.#keys[index] as Map<string, Record<string, unknown>>).values()];
      // Rules are data typed per stream; the warehouse checks table, scope and key columns at run time.
      await markDeleted(db, rule.table, rule.within(scope) as never, keys as never[], at);
    }
  }
}
