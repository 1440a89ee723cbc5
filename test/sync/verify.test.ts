import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runFullSync } from "../../src/sync/runs.ts";
import { verify, type VerifyLine } from "../../src/sync/verify.ts";
import { useTestDatabase } from "../support/database.ts";
import { openDeviatingFixture, TEST_KEY, type DeviatingFixture } from "../support/sync.ts";

/** `coldsync verify` reconciles the warehouse with the upstream, and names what is missing (issue 15). */

const run = promisify(execFile);
const databaseUrl = useTestDatabase("verify");
const SCHEMA = "verify";

let fixture: DeviatingFixture;
/** What the proxy does to the upstream's answers, per test. */
let rewrite: (path: string, body: unknown, query: URLSearchParams) => unknown = (_path, body) => body;

const records = (body: unknown) => (Array.isArray(body) ? body : ((body as { data?: unknown[] }).data ?? [body])) as Record<string, unknown>[];
const notOk = (lines: VerifyLine[]) => lines.filter((line) => line.status !== "ok");

async function upstreamTotals(campaignUid: string) {
  const client = fixture.client;
  const total = async (resource: "leads" | "link_clicks" | "email_opens") => (await client.page(resource, { campaignUid, offset: 0, limit: 1 })).total ?? 0;
  let schedules = 0;
  for await (const page of client.pages("leads", { campaignUid })) for (const lead of page.records) schedules += lead.value.schedules?.length ?? 0;
  return {
    leads: await total("leads"),
    link_clicks: await total("link_clicks"),
    email_opens: await total("email_opens"),
    replies: (await client.listReplies(campaignUid)).records.length,
    schedules,
  };
}

/** A running campaign with leads, clicks and opens, so that every child stream has something to miss. */
async function busyCampaign(): Promise<string> {
  for await (const page of fixture.client.pages("campaigns", {})) {
    for (const { value } of page.records) {
      if (value.status !== "running") continue;
      const totals = await upstreamTotals(value.uid);
      if (totals.leads > 0 && totals.email_opens > 0 && totals.replies > 0) return value.uid;
    }
  }
  throw new Error("the seed has no running campaign with leads, opens and replies");
}

beforeAll(async () => {
  fixture = await openDeviatingFixture(databaseUrl(), SCHEMA, (path, query, body) => rewrite(path, body, query));
  expect((await runFullSync(fixture.context())).outcome).toBe("succeeded");
});
afterAll(async () => {
  await fixture?.close();
});

describe("verify", () => {
  it("finds nothing wrong in a warehouse that equals the upstream, without walking leads", async () => {
    const result = await verify(fixture.context());
    expect(notOk(result.lines)).toEqual([]);
    expect(result.lines.map((line) => line.stream)).toEqual(expect.arrayContaining(["workspaces", "domains", "contact_lists", "campaigns", "leads", "replies", "link_clicks", "email_opens"]));
    const campaigns = new Set(result.lines.filter((line) => line.campaignUid !== null).map((line) => line.campaignUid)).size;
    const discovery = result.lines.filter((line) => line.campaignUid === null).length;
    // Listings of the account, then four counts per campaign: a lead total, the replies, a click total, an open total.
    expect(result.requests).toBeLessThanOrEqual(discovery * 2 + campaigns * 4);
  });

  it("finds no value differing after a clean sync, in every table the records read map to, for one #2 per campaign more", async () => {
    const keysOnly = await verify(fixture.context(), { deep: "all" });
    const result = await verify(fixture.context(), { deep: "all", values: true });
    expect(notOk(result.lines)).toEqual([]);
    const compared = result.lines.filter((line) => line.table !== undefined);
    expect(new Set(compared.map((line) => `${line.stream} → ${line.table}`))).toEqual(
      new Set([
        ...["workspaces", "domains", "contact_lists", "campaigns", "replies", "link_clicks", "email_opens"].map((stream) => `${stream} → ${stream}`),
        "campaign_detail → campaigns",
        // A campaign's sending domains are all key: checked for presence only.
        "campaign_detail → campaign_sending_domains",
        ...["contacts", "leads", "schedules", "email_sequences", "replies", "link_clicks"].map((table) => `leads → ${table}`),
      ]),
    );
    expect(compared.every((line) => (line.upstream ?? 0) > 0 && line.differingKeys?.count === 0 && line.missingKeys?.count === 0)).toBe(true);
    const campaigns = new Set(result.lines.filter((line) => line.campaignUid !== null).map((line) => line.campaignUid)).size;
    expect(result.requests - keysOnly.requests).toBe(campaigns);
  });

  it("asks a total that disagrees once more, as the sync does, and counts by the second answer: one answer a few off is no missing row", async () => {
    const victim = await busyCampaign();
    let misreported = 0;
    rewrite = (path, body, query) => {
      if (path === "/api/v1/leads/" && query.get("campaign_uid") === victim && query.get("limit") === "1" && misreported++ === 0) (body as { total: number }).total += 2;
      return body;
    };
    try {
      const result = await verify(fixture.context({ client: fixture.deviating }), { campaignUid: victim });
      expect(misreported).toBe(2);
      expect(notOk(result.lines)).toEqual([]);
    } finally {
      rewrite = (_path, body) => body;
    }
  });

  it("finds the leads, schedules and events of a campaign whose detail could not be placed synced, and names the detail", async () => {
    const victim = await busyCampaign();
    rewrite = (path, body) => {
      if (path === "/api/v1/campaign/") for (const record of records(body)) if (record.uid === victim) record.uid = "";
      return body;
    };
    const db = fixture.warehouse.db;
    for (const table of ["leads", "schedules", "replies", "link_clicks", "email_opens"] as const) {
      await sql`delete from ${sql.table(table)} where campaign_uid = ${victim}`.execute(db);
    }
    await sql`delete from sync_checkpoints where campaign_uid = ${victim}`.execute(db);
    const summary = await runFullSync(fixture.context({ client: fixture.deviating }));
    expect(summary.outcome).toBe("partial");

    const result = await verify(fixture.context(), { deep: "all" });
    const totals = await upstreamTotals(victim);
    const ofVictim = result.lines.filter((line) => line.campaignUid === victim && line.status !== "rejected");
    for (const stream of ["leads", "schedules", "replies", "link_clicks", "email_opens"] as const) {
      expect(ofVictim.find((line) => line.stream === stream)).toMatchObject({ status: "ok", upstream: totals[stream], warehouse: totals[stream] });
    }
    expect(notOk(result.lines)).toHaveLength(1);
    expect(result.lines.find((line) => line.status === "rejected" && line.stream === "campaign_detail")).toMatchObject({
      campaignUid: victim,
      recordKey: `requested=${victim}`,
      reason: expect.stringMatching(/^uid: empty/),
    });

    rewrite = (_path, body) => body;
    expect((await runFullSync(fixture.context())).outcome).toBe("succeeded");
    expect(notOk((await verify(fixture.context())).lines)).toEqual([]);
  });

  it("names the campaign and the workspace the warehouse lacks, and is ok again once a sync lands them", async () => {
    const db = fixture.warehouse.db;
    const campaign = (await db.selectFrom("campaigns").select("uid").orderBy("uid").executeTakeFirstOrThrow()).uid;
    const workspace = (await db.selectFrom("workspaces").select("id").orderBy("id").executeTakeFirstOrThrow()).id;
    await db.deleteFrom("campaigns").where("uid", "=", campaign).execute();
    await db.deleteFrom("workspaces").where("id", "=", workspace).execute();

    const result = await verify(fixture.context());
    expect(result.lines.find((line) => line.stream === "campaigns")).toMatchObject({ status: "missing", missingKeys: { count: 1, first: [campaign] } });
    expect(result.lines.find((line) => line.stream === "workspaces")).toMatchObject({ status: "missing", missingKeys: { count: 1, first: [String(workspace)] } });
    expect(result.problems).toBeGreaterThanOrEqual(2);

    await sql`delete from sync_checkpoints`.execute(db);
    expect((await runFullSync(fixture.context())).outcome).toBe("succeeded");
    expect(notOk((await verify(fixture.context())).lines)).toEqual([]);
  });

  it("reports a record with no usable key as rejected, with its reason", async () => {
    const victim = await busyCampaign();
    let stripped: string | undefined;
    rewrite = (path, body) => {
      if (path === "/api/v1/leads/") {
        for (const record of records(body)) {
          stripped ??= record.uid as string;
          if (record.uid === stripped) delete record.uid;
        }
      }
      return body;
    };
    await runFullSync(fixture.context({ client: fixture.deviating, }), { campaignUid: victim });
    const result = await verify(fixture.context(), { campaignUid: victim });
    expect(result.lines.filter((line) => line.status === "rejected")).toEqual([
      expect.objectContaining({ campaignUid: victim, stream: "leads", recordKey: null, reason: expect.stringMatching(/^uid: missing \(a key field/) }),
    ]);
    rewrite = (_path, body) => body;
    expect((await runFullSync(fixture.context(), { campaignUid: victim })).outcome).toBe("succeeded");
    expect(notOk((await verify(fixture.context(), { campaignUid: victim })).lines)).toEqual([]);
  });

  it("compares every key set with --deep=all, reading each listing once", async () => {
    const victim = await busyCampaign();
    const paths: string[] = [];
    rewrite = (path, body) => {
      paths.push(path);
      return body;
    };
    const result = await verify(fixture.context({ client: fixture.deviating }), { campaignUid: victim, deep: "all" });
    rewrite = (_path, body) => body;
    expect(notOk(result.lines)).toEqual([]);
    for (const stream of ["leads", "replies", "link_clicks", "email_opens"]) {
      expect(result.lines.find((line) => line.stream === stream)?.missingKeys).toEqual({ count: 0, first: [] });
    }
    expect(paths.filter((path) => path === "/api/v1/replies/")).toHaveLength(1);
  });

  it("names the lead missing from the warehouse with --deep", async () => {
    const victim = await busyCampaign();
    const db = fixture.warehouse.db;
    const lead = (await db.selectFrom("leads").select("uid").where("campaign_uid", "=", victim).orderBy("uid").executeTakeFirstOrThrow()).uid;
    await db.deleteFrom("leads").where("uid", "=", lead).execute();
    const shallow = await verify(fixture.context(), { campaignUid: victim });
    expect(shallow.lines.find((line) => line.stream === "leads")).toMatchObject({ status: "missing" });
    expect(shallow.lines.find((line) => line.stream === "leads")?.missingKeys).toBeUndefined();
    const deep = await verify(fixture.context(), { campaignUid: victim, deep: "mismatched" });
    expect(deep.lines.find((line) => line.stream === "leads")).toMatchObject({ status: "missing", missingKeys: { count: 1, first: [lead] } });
    expect(deep.lines.find((line) => line.stream === "email_opens")?.missingKeys).toEqual({ count: 0, first: [] });
    await sql`delete from sync_checkpoints`.execute(db);
    await runFullSync(fixture.context(), { campaignUid: victim });
  });
});

describe("coldsync verify", () => {
  const cli = (args: string[]) =>
    run(process.execPath, ["bin/coldsync.js", "verify", ...args], {
      env: {
        PATH: process.env.PATH ?? "",
        DATABASE_URL: databaseUrl(),
        COLDSYNC_SCHEMA: SCHEMA,
        COLDSYNC_API_URL: fixture.emulator.url,
        COLDSYNC_API_KEY: TEST_KEY,
        COLDSYNC_ACCOUNT: "acme",
        COLDSYNC_RATE_LIMIT: "500",
      },
    });

  it("prints a table no wider than 160 columns on the small seed, whose data holds a 255-character uid, and exits 0", async () => {
    const longest = await fixture.warehouse.db.selectFrom("campaigns").select(sql<number>`max(length(uid))::int`.as("n")).executeTakeFirstOrThrow();
    expect(longest.n).toBe(255);
    const { stdout } = await cli([]);
    const widths = stdout.split("\n").map((line) => line.length);
    expect(Math.max(...widths)).toBeLessThanOrEqual(160);
    expect(stdout).toMatch(/checks are ok/);
  });

  it("prints the rows whose values differ with --values, and the columns, and the rows not held live, and exits 1", async () => {
    const db = fixture.warehouse.db;
    const workspace = (await db.selectFrom("workspaces").select("id").orderBy("id").executeTakeFirstOrThrow()).id;
    await db.updateTable("workspaces").set({ credits_remaining: sql`credits_remaining + 1` }).where("id", "=", workspace).execute();
    // One domain held as deleted, another with a wrong name: one values line names both.
    const [gone, renamed] = (await db.selectFrom("domains").select("id").where("_deleted_at", "is", null).orderBy("id").limit(2).execute()).map((row) => row.id);
    await db.updateTable("domains").set({ _deleted_at: new Date() }).where("id", "=", gone as number).execute();
    await db.updateTable("domains").set({ domain: sql`domain || '.wrong'` }).where("id", "=", renamed as number).execute();
    const failure = await cli(["--values"]).then(
      () => undefined,
      (error: { code: number; stdout: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stdout).toMatch(new RegExp(`workspaces → workspaces .*│ differs +│ differs 1: ${workspace} \\(credits_remaining 1\\)`));
    expect(failure?.stdout).toMatch(new RegExp(`domains → domains .*│ missing +│ missing 1: ${gone}; differs 1: ${renamed} \\(domain 1\\)`));
    // The workspace's values line, and the domains' key set and values lines.
    expect(failure?.stdout).toMatch(/3 of \d+ checks are not ok/);
    expect(failure?.stdout).toMatch(/upstream changed a record after the last sync/);
    const json = await cli(["--values", "--json"]).then(
      () => undefined,
      (error: { stdout: string }) => JSON.parse(error.stdout) as { lines: VerifyLine[] },
    );
    expect(json?.lines.find((line) => line.status === "differs")).toMatchObject({
      stream: "workspaces",
      table: "workspaces",
      differingKeys: { count: 1, first: [String(workspace)] },
      columns: { credits_remaining: 1 },
    });
    await sql`delete from sync_checkpoints`.execute(db);
    await runFullSync(fixture.context());
  });

  it("names in its table the keys of an extra values line, as --json does: a sending domain the detail no longer lists", async () => {
    const db = fixture.warehouse.db;
    const campaign = (await db.selectFrom("campaigns").select("uid").where(sql`length(uid)`, "<", 20).orderBy("uid").executeTakeFirstOrThrow()).uid;
    await sql`INSERT INTO campaign_sending_domains (campaign_uid, domain_id, _synced_at, _first_seen_at) VALUES (${campaign}, 987654, now(), now())`.execute(db);
    try {
      const failure = await cli(["--values", "--campaign", campaign]).then(
        () => undefined,
        (error: { code: number; stdout: string }) => error,
      );
      expect(failure?.code).toBe(1);
      expect(failure?.stdout.split("\n").find((row) => row.includes("campaign_sending_domains"))).toMatch(/extra 1: .*987654/);
    } finally {
      await sql`DELETE FROM campaign_sending_domains WHERE domain_id = 987654`.execute(db);
    }
  });

  it("names a campaign it is asked about that neither side knows (a typo) unknown, and exits 1", async () => {
    const failure = await cli(["--campaign", "cmp_no_such_campaign"]).then(
      () => undefined,
      (error: { code: number; stdout: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stdout).toMatch(/│ campaigns +│ 0 +│ 0 +│ 0 +│ unknown +│ no such campaign/);
    expect(failure?.stdout).toMatch(/1 of 1 checks are not ok/);
  });

  it("prints the same result as JSON, identifiers in full, and exits 1 on a problem", async () => {
    const db = fixture.warehouse.db;
    const campaign = (await db.selectFrom("campaigns").select("uid").where(sql`length(uid)`, "=", 255).executeTakeFirstOrThrow()).uid;
    await db.deleteFrom("campaigns").where("uid", "=", campaign).execute();
    const failure = await cli(["--json"]).then(
      () => undefined,
      (error: { code: number; stdout: string }) => error,
    );
    expect(failure?.code).toBe(1);
    const result = JSON.parse(failure?.stdout ?? "{}") as { lines: VerifyLine[]; problems: number };
    expect(result.lines.find((line) => line.stream === "campaigns")?.missingKeys?.first).toEqual([campaign]);
    await sql`delete from sync_checkpoints`.execute(db);
    await runFullSync(fixture.context());
  });
});
