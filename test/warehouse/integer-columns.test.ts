import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ACCOUNT_STREAMS, CAMPAIGN_STREAMS } from "../../src/sync/streams/index.ts";
import type { ReadRecord } from "../../src/upstream/client.ts";
import { RECORD_TYPES, type RecordTypeName } from "../../src/upstream/record-types.ts";
import { integerColumn } from "../../src/upstream/tolerant.ts";
import type { Warehouse } from "../../src/warehouse/connect.ts";
import { migrateToLatest } from "../../src/warehouse/migrate.ts";
import { useBackends } from "./backends.ts";

/**
 * Tolerant reading keeps an integer outside its documented range when its
 * column holds it, and learns the column from the schema (integerColumn). The
 * migrations decide the columns; this holds the two together without a list
 * of either: a record is made from each schema with a distinct integer in
 * every integer field, the streams map it to rows, and each integer is found
 * in the columns it was written to.
 */

const [postgres] = useBackends("integer_columns");

/** A valid record of `schema` whose integers are 1, 2, 3, …, each noted with the schema that read it. */
function sample(schema: z.ZodType, integers: Map<number, z.ZodNumber>): unknown {
  if (schema instanceof z.ZodNullable) return sample(schema.unwrap() as z.ZodType, integers);
  if (schema instanceof z.ZodObject) return Object.fromEntries(Object.entries(schema.shape).map(([field, item]) => [field, sample(item as z.ZodType, integers)]));
  if (schema instanceof z.ZodArray) return [sample(schema.element as z.ZodType, integers)];
  if (schema instanceof z.ZodNumber) {
    const marker = integers.size + 1;
    integers.set(marker, schema);
    return marker;
  }
  if (schema instanceof z.ZodBoolean) return false;
  if (schema instanceof z.ZodEnum) return schema.options[0];
  if (schema instanceof z.ZodISODateTime) return "2026-01-02T03:04:05Z";
  if (schema instanceof z.ZodString) return schema.safeParse("x").success ? "x" : "10:00:00";
  if (schema instanceof z.ZodRecord) return {};
  return null;
}

let warehouse: Warehouse;
beforeAll(async () => {
  warehouse = await postgres!.open("integer_columns");
  await migrateToLatest(warehouse);
});
afterAll(async () => {
  await warehouse?.destroy();
});

describe("integers of the upstream's records", () => {
  it("each say the column type the migrations gave the columns it is written to", async () => {
    const { rows: catalog } = await sql<{ table: string; column: string; type: string }>`
      SELECT table_name AS table, column_name AS column, data_type AS type FROM information_schema.columns WHERE table_schema = 'integer_columns'`.execute(warehouse.db);
    const typeOf = new Map(catalog.map((row) => [`${row.table}.${row.column}`, row.type]));
    const found: string[] = [];
    const wrong: string[] = [];
    for (const stream of [...ACCOUNT_STREAMS, ...CAMPAIGN_STREAMS]) {
      const type = ("resource" in stream ? stream.resource : stream.name) as RecordTypeName;
      const integers = new Map<number, z.ZodNumber>();
      const value = sample(RECORD_TYPES[type].schema, integers);
      const read: ReadRecord<unknown> = { value, issues: [], raw: value };
      const batch = stream.rows(read, { scope: { account: "a", campaignUid: "c" }, observedAt: new Date(), reject: () => undefined });
      for (const [table, rows] of Object.entries(batch)) {
        for (const [column, cell] of Object.entries((rows as Record<string, unknown>[])[0] ?? {})) {
          const schema = typeof cell === "number" ? integers.get(cell) : undefined;
          if (schema === undefined) continue;
          const declared = integerColumn.get(schema)?.column ?? "bigint";
          found.push(`${table}.${column}`);
          if (typeOf.get(`${table}.${column}`) !== declared) wrong.push(`${type} → ${table}.${column}: ${typeOf.get(`${table}.${column}`)}, declared ${declared}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    // The derivation reached the columns that matter: a 4-byte count, a bigint id documented as int32.
    expect(found).toEqual(expect.arrayContaining(["schedules.email_open_count", "domains.warmup_days_remaining", "workspaces.id", "email_sequences.next_message_days"]));
  });
});
