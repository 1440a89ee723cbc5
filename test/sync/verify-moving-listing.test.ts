import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { runFullSync } from "../../src/sync/runs.ts";
import { verify, type VerifyLine } from "../../src/sync/verify.ts";
import { UpstreamClient } from "../../src/upstream/client.ts";
import type { Lead } from "../../src/upstream/resources.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";

/** verify --deep reads key sets with the sync's walk and its proof: a listing that moves while it is read is walked again, or not compared. */

const databaseUrl = useTestDatabase("verify_moving_listing");
const CAMPAIGN = "cmp_moving";
const scripted = useScriptedCampaigns(databaseUrl, CAMPAIGN);

const notOk = (lines: VerifyLine[]) =>
  lines.filter((line) => line.status !== "ok").map((line) => `${line.stream}${line.table ? ` → ${line.table}` : ""} ${line.status} (${line.upstream}/${line.warehouse}) ${JSON.stringify(line.extraKeys?.first ?? [])}`);

describe("verify --deep on a listing whose order moves while it is read", () => {
  it("a lead that moves to the front between two pages is not named extra (the warehouse holds exactly what the upstream lists)", async () => {
    const h = await scripted({ status: "running", leads: 5, sentOn: "2026-05-01T09:05:00.000Z" });
    const client = new UpstreamClient({ baseUrl: h.upstream.url, apiKey: "k", requestsPerSecond: 5_000, maxRetries: 1, retryBaseMs: 1, retryCapMs: 5, timeoutMs: 5_000, pageSize: 2 });
    try {
      expect((await runFullSync(h.context({ client }))).outcome).toBe("succeeded");
      expect(notOk((await verify(h.context({ client }), { deep: "all" })).lines)).toEqual([]);
      // The upstream reorders (it guarantees no order): L5 moves to the front while verify walks the leads.
      let leadsPages = 0;
      h.upstream.hook = ({ path }) => {
        if (path !== "/api/v1/leads/") return undefined;
        leadsPages += 1;
        if (leadsPages === 2) {
          const leads = h.upstream.state.leads.get(CAMPAIGN) as Lead[];
          leads.unshift(leads.pop() as Lead);
        }
        return undefined;
      };
      const lines = (await verify(h.context({ client }), { deep: "all" })).lines;
      h.upstream.hook = undefined;
      // Same five leads upstream and in the warehouse.
      expect(notOk(lines)).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it("a lead the warehouse wrongly holds deleted is still named missing when it moves to the front during --deep's walk", async () => {
    const h = await scripted({ status: "running", leads: 5, sentOn: "2026-05-01T09:05:00.000Z" });
    const client = new UpstreamClient({ baseUrl: h.upstream.url, apiKey: "k", requestsPerSecond: 5_000, maxRetries: 1, retryBaseMs: 1, retryCapMs: 5, timeoutMs: 5_000, pageSize: 2 });
    try {
      expect((await runFullSync(h.context({ client }))).outcome).toBe("succeeded");
      // The damage: L5 held as deleted (and its schedule), though the upstream lists it.
      await sql`UPDATE leads SET _deleted_at = now() WHERE uid = 'L5'`.execute(h.warehouse.db);
      await sql`UPDATE schedules SET _deleted_at = now() WHERE lead_uid = 'L5'`.execute(h.warehouse.db);
      expect(notOk((await verify(h.context({ client }))).lines)).toEqual(['leads missing (5/4) []']);
      // `--deep` walks the campaign whose count disagrees; L5 moves to the front while it does.
      let leadsPages = 0;
      h.upstream.hook = ({ path, query }) => {
        if (path !== "/api/v1/leads/" || query.get("limit") === "1") return undefined;
        leadsPages += 1;
        if (leadsPages === 2) {
          const leads = h.upstream.state.leads.get(CAMPAIGN) as Lead[];
          leads.unshift(leads.pop() as Lead);
        }
        return undefined;
      };
      const result = await verify(h.context({ client }), { deep: "mismatched" });
      h.upstream.hook = undefined;
      expect(result.problems, JSON.stringify(notOk(result.lines))).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });
});
