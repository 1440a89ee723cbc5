import { readFileSync } from "node:fs";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { runColdsync } from "../support/cli.ts";
import { useTestDatabase } from "../support/database.ts";

/**
 * The README's example "New enum values the upstream started sending" counted `count(*) AS rows` over the
 * field_issues view, which has one line per row, *source* and field. A reply is read by two sources (the
 * reply listing #13 and the copy nested in its schedule, stream `leads`), and a drifting upstream sends the same
 * unknown classification in both, so each such reply is counted twice. Seen on a `--drift wild` emulator:
 * reply_classification out_of_office "rows" 10 for 5 replies, unknown 4 for 2, auto_reply 2 for 1. (The first
 * example of the same block counts `count(DISTINCT record_key)`, and `coldsync status` counts rows too.)
 */

const databaseUrl = useTestDatabase("readme_enum_example");

function readmeExample(): string {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const start = readme.indexOf("-- New enum values the upstream started sending.");
  expect(start).toBeGreaterThan(0);
  const end = readme.indexOf(";", start);
  return readme.slice(start, end + 1);
}

const issue = (at: string) => ({
  reply_classification: {
    raw: "out_of_office",
    reason: "not one of the documented values (positive, neutral, negative); kept as text",
    first_seen_at: at,
  },
});

beforeAll(async () => {
  const migrated = await runColdsync(["migrate"], { DATABASE_URL: databaseUrl() });
  expect(migrated.code, migrated.stderr).toBe(0);
  const client = new pg.Client({ connectionString: databaseUrl() });
  await client.connect();
  try {
    // One reply, as a sync writes it when the listing and the schedule's copy both carry the unknown value.
    const fieldIssues = { leads: issue("2026-06-01T00:00:00Z"), replies: issue("2026-06-01T00:00:01Z") };
    await client.query(
      `INSERT INTO coldsync.replies (id, campaign_uid, schedule_id, reply_classification, _synced_at, _first_seen_at, _field_issues)
       VALUES (400000095, 'cmp_a', 1001, 'out_of_office', now(), now(), $1)`,
      [JSON.stringify(fieldIssues)],
    );
  } finally {
    await client.end();
  }
});

describe("the README's 'New enum values' example", () => {
  it("counts one row for one reply carrying one new enum value", async () => {
    const outcome = await runColdsync(["sql", "--json", "--", readmeExample()], { DATABASE_URL: databaseUrl() });
    expect(outcome.code, outcome.stderr).toBe(0);
    const lines = outcome.stdout.trim().split("\n").map((line) => JSON.parse(line) as { table_name: string; raw_value: string; rows: string | number });
    expect(lines).toHaveLength(1);
    expect(Number(lines[0]!.rows)).toBe(1);
  });
});
