import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.ts";
import { runFullSync } from "../../src/sync/runs.ts";
import { verify } from "../../src/sync/verify.ts";
import { UpstreamClient } from "../../src/upstream/client.ts";
import { useTestDatabase } from "../support/database.ts";
import { openSyncFixture, TEST_KEY, type SyncFixture } from "../support/sync.ts";

/**
 * An upstream that sends one malformed lead: a real HTTP proxy in front of the
 * emulator rewrites the first lead of one leads page.
 */

const databaseUrl = useTestDatabase("rejected");
let fixture: SyncFixture;
let proxy: Server;
let proxyUrl: string;
let corrupted: { uid: string } | undefined;
/** A running campaign: its leads are walked on every run, so the bad record is replayed. */
let victimCampaign: string;

function startCorruptingProxy(target: string): Promise<Server> {
  const server = createServer((incoming, outgoing) => {
    const forwarded = request(`${target}${incoming.url ?? "/"}`, { method: incoming.method, headers: incoming.headers }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on("data", (chunk: Buffer) => chunks.push(chunk));
      answer.on("end", () => {
        let body = Buffer.concat(chunks).toString();
        const ofVictimCampaign = incoming.url?.startsWith("/api/v1/leads/") && incoming.url.includes(`campaign_uid=${victimCampaign}`);
        if (ofVictimCampaign && answer.statusCode === 200) {
          const page = JSON.parse(body) as { data: { uid: string; contact: { email_id: unknown } }[] };
          // The first lead ever served is the victim, every time it is served again.
          corrupted ??= page.data[0] ? { uid: page.data[0].uid } : undefined;
          const victim = page.data.find((lead) => lead.uid === corrupted?.uid);
          if (victim) {
            victim.contact.email_id = 42;
            body = JSON.stringify(page);
          }
        }
        outgoing.writeHead(answer.statusCode ?? 502, { "content-type": "application/json" });
        outgoing.end(body);
      });
    });
    incoming.pipe(forwarded);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

beforeAll(async () => {
  fixture = await openSyncFixture(databaseUrl(), "rejected");
  const listing = await fetch(`${fixture.emulator.url}/api/v1/campaigns/?limit=100`, { headers: { "x-api-key": TEST_KEY } });
  const campaigns = ((await listing.json()) as { data: { uid: string; status: string }[] }).data;
  victimCampaign = campaigns.find((campaign) => campaign.status === "running")?.uid ?? "";
  proxy = await startCorruptingProxy(fixture.emulator.url);
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
afterAll(async () => {
  proxy.close();
  await fixture.close();
});

describe("an invalid record", () => {
  it("lands in rejected_records with its reason and raw payload while the rest of its page lands", async () => {
    const client = new UpstreamClient({ baseUrl: proxyUrl, apiKey: TEST_KEY, requestsPerSecond: 1_000 });
    const context = fixture.context({ client });
    const summary = await runFullSync(context);
    expect(summary.outcome).toBe("succeeded");
    expect(summary.rejected).toBe(1);

    const db = fixture.warehouse.db;
    const rejected = await db.selectFrom("rejected_records").selectAll().execute();
    expect(rejected).toHaveLength(1);
    expect(rejected[0]).toMatchObject({ stream: "leads", account: "acme" });
    expect(rejected[0]?.reason).toMatch(/email_id/);
    expect(rejected[0]?.payload).toMatchObject({ uid: corrupted?.uid, contact: { email_id: 42 } });
    expect(await db.selectFrom("leads").select("uid").where("uid", "=", corrupted?.uid ?? "").executeTakeFirst()).toBeUndefined();

    const truth = fixture.emulator.truth(TEST_KEY);
    const leads = await db.selectFrom("leads").select(sql<number>`count(*)::int`.as("n")).executeTakeFirstOrThrow();
    expect(leads.n + rejected.length).toBe(truth.counts.leads);

    // Every upstream record is a row or a rejected record, so verify finds nothing missing.
    const checks = await verify(fixture.context({ client, logger: createLogger({ level: "silent" }) }));
    expect(checks.filter((check) => !check.ok)).toEqual([]);
    await client.close();
  });

  it("is stored once however often its page is replayed", async () => {
    const client = new UpstreamClient({ baseUrl: proxyUrl, apiKey: TEST_KEY, requestsPerSecond: 1_000 });
    await runFullSync(fixture.context({ client }));
    await client.close();
    const rejected = await fixture.warehouse.db.selectFrom("rejected_records").select(["times_seen"]).execute();
    expect(rejected).toEqual([{ times_seen: 2 }]);
  });

  it("leaves no trace of the API key anywhere in the warehouse", async () => {
    const tables = await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = 'rejected'`.execute(fixture.warehouse.db);
    expect(tables.rows.length).toBeGreaterThan(10);
    for (const { name } of tables.rows) {
      const hits = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(name)} t where t::text like ${`%${TEST_KEY}%`}`.execute(fixture.warehouse.db);
      expect({ name, hits: hits.rows[0]?.n }).toEqual({ name, hits: 0 });
    }
  });
});
