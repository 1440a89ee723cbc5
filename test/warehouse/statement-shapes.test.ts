import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { runCampaignSync, runDiscovery } from "../../src/sync/runs.ts";
import { NAMED_PER_GROUP, namePreparedStatements, prepareOnce } from "../../src/warehouse/prepared-statements.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";

/**
 * A worker re-reads every campaign's detail each cycle, for months. A field that deviates and cannot be read is
 * left out of its row (withoutUnreadable), so every distinct set of unreadable fields is a new upsert shape: a
 * compiled statement in this process and, once named, a prepared statement on every pooled connection. A flaky
 * upstream must not make either grow without bound.
 */

const CAMPAIGN = "cmp_shapes";

/** Booleans of a campaign's settings: a value like "maybe" is unreadable, so its column is left out of the row. */
const FLAKY_FIELDS = [
  "skip_dangerous_emails",
  "skip_disposable_emails",
  "skip_catchall_emails",
  "skip_full_inbox_emails",
  "skip_invalid_emails",
  "forward_negative_emails",
  "forward_netural_emails",
] as const;

/** The name a connection sends `text` under, or undefined when it goes unnamed. */
function nameOf(text: string): string | undefined {
  let sent: { name?: string } | undefined;
  const client = { query: (config: { name?: string }) => (sent = config) } as unknown as pg.ClientBase;
  namePreparedStatements(client);
  void client.query(text);
  return sent?.name;
}

const scripted = useScriptedCampaigns(useTestDatabase("statement_shapes"), CAMPAIGN);

describe("upsert statements of a worker that runs for months", () => {
  it("stay bounded when the upstream garbles a different set of campaign fields each cycle", async () => {
    const h = await scripted({ status: "running", leads: 0 });
    const ctx = h.context();
    await runDiscovery(ctx);
    const settings = h.upstream.state.campaigns[0]?.settings as unknown as Record<string, unknown>;
    const clean = { ...settings };

    // 128 cycles (a day of COLDSYNC_ACTIVE_EVERY=15m is 96), each with a different set of fields the upstream garbled.
    const cycles = 2 ** FLAKY_FIELDS.length;
    for (let cycle = 0; cycle < cycles; cycle += 1) {
      Object.assign(settings, clean);
      FLAKY_FIELDS.forEach((field, bit) => {
        if ((cycle >> bit) & 1) settings[field] = "maybe";
      });
      const summary = await runCampaignSync(ctx, CAMPAIGN, "leads");
      expect(summary.outcome, `cycle ${cycle}`).not.toBe("failed");
    }
    const { rows } = await h.warehouse.db
      .connection()
      .execute((connection) => sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name LIKE 'coldsync\_%'`.execute(connection));
    // The campaigns' detail shapes hold NAMED_PER_GROUP names at most; the rest of the sync's shapes a few more.
    expect(rows[0]?.n).toBeLessThanOrEqual(NAMED_PER_GROUP + 24);
    // Past the bound of its group, a text is sent unnamed: parsed each time, held by no session.
    const group = `a group of its own ${randomUUID()}`;
    const texts = Array.from({ length: NAMED_PER_GROUP + 1 }, (_, index) => `SELECT 'shape ${index} of ${group}'`);
    for (const text of texts) prepareOnce(text, group);
    expect(texts.map((text) => nameOf(text) !== undefined)).toEqual([...Array<boolean>(NAMED_PER_GROUP).fill(true), false]);
  }, 60_000);
});
