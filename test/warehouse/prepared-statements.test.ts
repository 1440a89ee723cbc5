import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { namePreparedStatements, prepareOnce } from "../../src/warehouse/prepared-statements.ts";
import { useTestDatabase } from "../support/database.ts";

const databaseUrl = useTestDatabase("prepared");

describe("named prepared statements", () => {
  let client: pg.Client;

  beforeEach(async () => {
    client = new pg.Client({ connectionString: databaseUrl() });
    await client.connect();
    namePreparedStatements(client);
    await client.query("DROP TABLE IF EXISTS items; CREATE TABLE items (id int PRIMARY KEY, label text)");
  });

  afterEach(async () => {
    await client.end();
  });

  const insertItem = "INSERT INTO items (id, label) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET label = excluded.label";
  prepareOnce(insertItem);

  const prepared = async () => (await client.query<{ name: string; statement: string }>("SELECT name, statement FROM pg_prepared_statements")).rows;

  it("prepares a registered text once per connection and reuses it", async () => {
    for (let id = 1; id <= 3; id += 1) await client.query(insertItem, [id, `item ${id}`]);
    expect(await prepared()).toEqual([{ name: expect.stringMatching(/^coldsync_\d+$/), statement: insertItem }]);
    expect((await client.query("SELECT count(*)::int AS n FROM items")).rows).toEqual([{ n: 3 }]);
  });

  it("sends every other text unnamed", async () => {
    await client.query("INSERT INTO items (id, label) VALUES ($1, $2)", [1, "one"]);
    expect(await prepared()).toEqual([]);
  });

  it("keeps working after a rolled back transaction and after its table is dropped and made again", async () => {
    await client.query("BEGIN");
    await client.query(insertItem, [1, "rolled back"]);
    await client.query("ROLLBACK");
    await client.query(insertItem, [2, "after rollback"]);
    await client.query("BEGIN");
    await expect(client.query("SELECT 1/0")).rejects.toThrow(/division by zero/);
    await expect(client.query(insertItem, [3, "in an aborted transaction"])).rejects.toThrow(/aborted/);
    await client.query("ROLLBACK");
    await client.query("DROP TABLE items; CREATE TABLE items (id int PRIMARY KEY, label text)");
    await client.query(insertItem, [4, "after the table was made again"]);
    expect((await client.query("SELECT id, label FROM items")).rows).toEqual([{ id: 4, label: "after the table was made again" }]);
  });
});
