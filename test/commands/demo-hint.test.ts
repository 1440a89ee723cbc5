import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queryHint } from "../../src/commands/demo-session.ts";
import { openWarehouse, type Warehouse } from "../../src/warehouse/connect.ts";
import { useTestDatabase } from "../support/database.ts";

/** The demo's closing hint names the schema as a PostgreSQL client must write it. */

const databaseUrl = useTestDatabase("demo_hint");
let reserved: Warehouse;
let plain: Warehouse;

beforeAll(async () => {
  reserved = await openWarehouse({ databaseUrl: databaseUrl(), dataDir: ".coldsync", schema: "user" });
  plain = await openWarehouse({ databaseUrl: databaseUrl(), dataDir: ".coldsync", schema: "demo_hint" });
});
afterAll(async () => {
  await reserved.destroy();
  await plain.destroy();
});

describe("the demo's query hint", () => {
  it("quotes a schema named after a reserved word, and only such a schema", async () => {
    expect(await queryHint(reserved, false)).toContain('or from any PostgreSQL client: SELECT * FROM "user".campaign_funnel;');
    expect(await queryHint(plain, false)).toContain("or from any PostgreSQL client: SELECT * FROM demo_hint.campaign_funnel;");
  });
});
