import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { createMetrics, METRIC_NAMES } from "../../src/http/metrics.ts";
import { runFullSync } from "../../src/sync/runs.ts";
import { verify } from "../../src/sync/verify.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";
import { buildCampaign, buildLead } from "../support/scripted-upstream.ts";

/** The verdict /metrics and the status page show is the last one on the whole account, not a `verify --campaign`. */

const databaseUrl = useTestDatabase("verify_scoped_verdict");
const CAMPAIGN = "cmp_broken";
const OTHER = "cmp_fine";
const scripted = useScriptedCampaigns(databaseUrl, CAMPAIGN);

describe("the verdict /metrics exports after a scoped verification", () => {
  it("a `verify --campaign` of a healthy campaign does not clear the account's known damage from coldsync_verify_problems", async () => {
    const h = await scripted({ status: "running", leads: 3, sentOn: "2026-05-01T09:05:00.000Z" });
    h.upstream.state.campaigns.push(buildCampaign(OTHER, "running"));
    h.upstream.state.leads.set(OTHER, [buildLead("M1", 2001, 1, "2026-05-01T09:05:00.000Z")]);
    expect((await runFullSync(h.context())).outcome).toBe("succeeded");
    // Damage: a lead of cmp_broken held as deleted.
    await sql`UPDATE leads SET _deleted_at = now() WHERE uid = 'L1'`.execute(h.warehouse.db);

    const metrics = createMetrics();
    metrics.watchCheckpoints({ db: h.warehouse.db, account: "acme" });
    const problemsExported = async () =>
      (await metrics.registry.metrics()).split("\n").filter((line) => line.startsWith(`${METRIC_NAMES.verifyProblems}{`));

    // The worker's periodic (account-wide) verification finds it.
    const full = await verify(h.context({ trigger: "worker" }));
    expect(full.problems).toBeGreaterThan(0);
    expect(await problemsExported()).toEqual([`${METRIC_NAMES.verifyProblems}{stream="leads",check="missing"} 1`]);

    // An operator checks another campaign from the command line: that one is fine.
    const scoped = await verify(h.context(), { campaignUid: OTHER });
    expect(scoped.problems).toBe(0);

    // Nothing was repaired (a full verification still finds the lead missing, below): the gauge must still say so.
    expect(await problemsExported(), "coldsync_verify_problems after `verify --campaign cmp_fine`").toEqual([
      `${METRIC_NAMES.verifyProblems}{stream="leads",check="missing"} 1`,
    ]);
    expect((await verify(h.context({ trigger: "worker" }))).problems).toBeGreaterThan(0);
  });
});
