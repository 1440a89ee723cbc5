import { describe, expect, it } from "vitest";
import { runFullSync } from "../../src/sync/runs.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";

/**
 * JSON numbers a double cannot hold as sent, from an upstream whose other
 * system hands out 20-digit ids or whose floats carry every digit. JSON.parse
 * would round each without a word (and read 1e400 as Infinity, written as
 * null): each is kept as the text it was sent as, and named.
 */

type Json = Record<string, unknown>;
const CAMPAIGN = "cmp_long_numbers";
const scripted = useScriptedCampaigns(useTestDatabase("long_numbers"), CAMPAIGN);
const UNROUNDED = "a number with more digits (or a larger exponent) than a double holds exactly; read as the text it was sent as";

/** Writes `@@text@@` placeholders of the JSON text as the bare numbers they hold. */
const asNumbers = (text: string) => text.replace(/"@@([^@"]+)@@"/g, "$1");

describe("numbers a double cannot hold", () => {
  it("keeps unknown fields' long numbers exactly, as text, named; a uid sent as a 20-digit number is placed under its digits", async () => {
    const h = await scripted({ status: "running", leads: 2, sentOn: "2026-05-01T10:00:00.000Z" });
    const [first, second] = (h.upstream.state.leads.get(CAMPAIGN) ?? []) as unknown as Json[];
    Object.assign(first as Json, {
      external_ref: "@@12345678901234567890123@@",
      ratio: "@@0.1000000000000000055511151231257827@@",
      far: "@@1e400@@",
      nested: { ids: ["@@9007199254740993@@", 7] },
    });
    (second as Json).uid = "@@98765432109876543210@@";
    h.upstream.rewriteText = asNumbers;

    const summary = await runFullSync(h.context());

    const db = h.warehouse.db;
    const leads = await db.selectFrom("leads").select(["uid", "_extra", "_field_issues"]).orderBy("uid").execute();
    expect({ outcome: summary.outcome, uids: leads.map((row) => row.uid) }).toEqual({ outcome: "succeeded", uids: ["98765432109876543210", "L1"] });
    const [placed, l1] = leads;
    expect(l1?._extra).toEqual({ external_ref: "12345678901234567890123", ratio: "0.1000000000000000055511151231257827", far: "1e400", nested: { ids: ["9007199254740993", 7] } });
    expect(l1?._field_issues).toMatchObject({
      leads: {
        external_ref: { reason: UNROUNDED, raw: "12345678901234567890123" },
        ratio: { reason: UNROUNDED, raw: "0.1000000000000000055511151231257827" },
        far: { reason: UNROUNDED, raw: "1e400" },
        "nested.ids.0": { reason: UNROUNDED, raw: "9007199254740993" },
      },
    });
    expect(placed?._field_issues).toMatchObject({ leads: { uid: { reason: UNROUNDED, raw: "98765432109876543210" } } });
    expect(await db.selectFrom("schedules").select("lead_uid").orderBy("lead_uid").execute()).toEqual([{ lead_uid: "98765432109876543210" }, { lead_uid: "L1" }]);
  });

  it("sets aside a reply whose integer id is past 2^53 - 1 with its digits as sent, not one rounded onto another reply's id", async () => {
    const h = await scripted({ status: "running", leads: 1, sentOn: "2026-05-01T10:00:00.000Z" });
    const reply = (id: unknown) => ({ id, schedule_id: 1001, body_plain_text: "hi", body_html: "<p>hi</p>", received_on: "2026-05-01T11:00:00Z", reply_classification: "positive" });
    // JSON.parse reads both as 9007199254740992: one would overwrite the other as a single reply.
    h.upstream.state.replies.set(CAMPAIGN, [reply("@@9007199254740993@@"), reply("@@9007199254740992@@"), reply(42)] as never);
    h.upstream.rewriteText = asNumbers;

    const summary = await runFullSync(h.context());

    const db = h.warehouse.db;
    const rejected = await db.selectFrom("rejected_records").select(["stream", "reason", "payload"]).execute();
    expect(summary.outcome).toBe("partial");
    expect(await db.selectFrom("replies").select("id").execute()).toEqual([{ id: 42 }]);
    const BEYOND = "id: beyond 2^53 - 1, cannot be read exactly; not stored (a key field, so the record cannot be placed)";
    const set = rejected.map((row) => ({ stream: row.stream, reason: row.reason, id: (row.payload as Json).id })).sort((a, b) => String(a.id).localeCompare(String(b.id)));
    // The payload keeps each id as sent: the one a double holds as a number, the other as its digits.
    expect(set).toEqual([
      { stream: "replies", reason: BEYOND, id: 9007199254740992 },
      { stream: "replies", reason: BEYOND, id: "9007199254740993" },
    ]);
  });

  it("keeps them in an answer that spaces its colons, and in one where another lead names a field twice", async () => {
    for (const deviation of [(text: string) => text.replace(/":/g, '" :'), (text: string) => text.replace('"dup":1', '"dup":1,"dup":2')]) {
      const h = await scripted({ status: "running", leads: 2, sentOn: "2026-05-01T10:00:00.000Z" });
      const [first, second] = (h.upstream.state.leads.get(CAMPAIGN) ?? []) as unknown as Json[];
      Object.assign(first as Json, { external_ref: "@@12345678901234567890123@@" });
      Object.assign(second as Json, { dup: 1 });
      h.upstream.rewriteText = (text) => deviation(asNumbers(text));

      const summary = await runFullSync(h.context());

      const row = await h.warehouse.db.selectFrom("leads").select(["_extra", "_field_issues"]).where("uid", "=", "L1").executeTakeFirstOrThrow();
      expect({ outcome: summary.outcome, extra: row._extra, issues: row._field_issues }).toMatchObject({
        outcome: "succeeded",
        extra: { external_ref: "12345678901234567890123" },
        issues: { leads: { external_ref: { reason: UNROUNDED, raw: "12345678901234567890123" } } },
      });
    }
  });
});
