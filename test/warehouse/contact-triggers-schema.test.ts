import pg from "pg";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openWarehouse, type Warehouse } from "../../src/warehouse/connect.ts";
import { migrateToLatest } from "../../src/warehouse/migrate.ts";
import { useTestDatabase } from "../support/database.ts";

/**
 * The contact triggers on `leads` name `contacts` and `leads` unqualified: they pin the warehouse schema's
 * search_path (migration 0023), as the history functions do, so a hand edit of a lead from psql's default path
 * works, and a statement on one account's leads never touches another account's contacts in the same database.
 */

const databaseUrl = useTestDatabase("contact_triggers_schema");

let acme: Warehouse;
let bravo: Warehouse;

async function seed(warehouse: Warehouse): Promise<void> {
  const at = sql`TIMESTAMPTZ '2024-03-01 00:00:00+00'`;
  await sql`INSERT INTO contacts (id, email_id, bounced, unsubscribed, _synced_at, _first_seen_at) VALUES
              (7, 'seven@prospect.example', false, false, ${at}, ${at}),
              (9, 'nine@prospect.example', false, false, ${at}, ${at})`.execute(warehouse.db);
  await sql`INSERT INTO leads (uid, campaign_uid, contact_id, sender_email_address, sender_name, _synced_at, _first_seen_at) VALUES
              (${`${warehouse.schema}-lead-7`}, 'cmp_1', 7, 'ana@example.com', 'Ana', ${at}, ${at})`.execute(warehouse.db);
  // Contact 9: retired (no lead holds it), as the sync leaves a contact its last lead let go of.
  await sql`UPDATE contacts SET _deleted_at = ${at} WHERE id = 9`.execute(warehouse.db);
}

async function onSession<T>(searchPath: string | undefined, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl() });
  await client.connect();
  try {
    if (searchPath !== undefined) await client.query(`SET search_path TO ${searchPath}`);
    return await work(client);
  } finally {
    await client.end();
  }
}

async function contact(schema: string, id: number): Promise<"live" | "retired" | "absent"> {
  return onSession(undefined, async (client) => {
    const { rows } = await client.query<{ deleted: boolean }>(`SELECT _deleted_at IS NOT NULL AS deleted FROM ${schema}.contacts WHERE id = $1`, [id]);
    return rows[0] === undefined ? "absent" : rows[0].deleted ? "retired" : "live";
  });
}

beforeAll(async () => {
  acme = await openWarehouse({ databaseUrl: databaseUrl(), dataDir: "/nonexistent", schema: "acme" });
  bravo = await openWarehouse({ databaseUrl: databaseUrl(), dataDir: "/nonexistent", schema: "bravo" });
  await migrateToLatest(acme);
  await migrateToLatest(bravo);
  await seed(acme);
  await seed(bravo);
});

afterAll(async () => {
  await acme?.destroy();
  await bravo?.destroy();
});

describe("the contact triggers on leads", () => {
  it("work on their own schema's contacts from a session on the default search_path (a hand edit from psql)", async () => {
    const outcome = await onSession(undefined, async (client) => {
      try {
        await client.query(`UPDATE acme.leads SET _deleted_at = TIMESTAMPTZ '2024-04-01 00:00:00+00' WHERE uid = 'acme-lead-7'`);
        return "updated";
      } catch (error) {
        return (error as Error).message;
      }
    });
    expect({ outcome, contact7: await contact("acme", 7) }).toEqual({ outcome: "updated", contact7: "retired" });
  });

  it("never read or write another account's schema: a statement on bravo.leads acts on bravo.contacts", async () => {
    await onSession("acme", async (client) => {
      // bravo's only lead holding contact 7 goes: bravo's contact 7 has no live holder left.
      await client.query(`UPDATE bravo.leads SET _deleted_at = TIMESTAMPTZ '2024-04-01 00:00:00+00' WHERE uid = 'bravo-lead-7'`);
      // A live bravo lead now holds contact 9: bravo's contact 9 comes back; acme's, held by nothing in acme, must not.
      await client.query(`INSERT INTO bravo.leads (uid, campaign_uid, contact_id, sender_email_address, sender_name, _synced_at, _first_seen_at)
                          VALUES ('bravo-lead-9', 'cmp_1', 9, 'ana@example.com', 'Ana', now(), now())`);
    });
    expect({
      bravo7: await contact("bravo", 7),
      bravo9: await contact("bravo", 9),
      acme9: await contact("acme", 9),
    }).toEqual({ bravo7: "retired", bravo9: "live", acme9: "retired" });
  });
});
