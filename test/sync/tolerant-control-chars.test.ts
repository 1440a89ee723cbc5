import { describe, expect, it } from "vitest";
import { runFullSync } from "../../src/sync/runs.ts";
import type { Reply } from "../../src/upstream/resources.ts";
import { useTestDatabase } from "../support/database.ts";
import { useScriptedCampaigns } from "../support/scripted-campaign.ts";

/**
 * A reply body with a raw (unescaped) tab or line break, as hand-built JSON writers send it: strict JSON refuses
 * control characters inside strings. One such field must not cost every record of the answer: the reply listing
 * (#13) is not paged, so not one reply of the campaign would ever land, run after run. README: "A deviation in one
 * field must never cost the record or anything below it"; the characters themselves are storable text.
 */

const CAMPAIGN = "cmp_control_chars";
const scripted = useScriptedCampaigns(useTestDatabase("tolerant_control_chars"), CAMPAIGN);

function reply(id: number, body: string): Reply {
  return { id, schedule_id: 1001, body_plain_text: body, body_html: "<p>x</p>", received_on: `2026-05-02T0${id}:00:00Z`, mail_from: "a@example.test", subject: "Re: Step 1", reply_classification: "positive" };
}

describe("an answer whose strings hold raw control characters", () => {
  it("lands every reply of the listing, the one with a raw tab and line break in its body included", async () => {
    const h = await scripted({ status: "running", leads: 1, sentOn: "2026-05-01T10:00:00.000Z" });
    h.upstream.state.replies.set(CAMPAIGN, [reply(1, "Thanks,\tsee below\nBest"), reply(2, "Interested")]);
    // The upstream writes the tab and the line break as they are, not as \t and \n.
    h.upstream.rewriteText = (text) => (text.includes('"mail_from"') ? text.replaceAll("\\t", "\t").replaceAll("\\n", "\n") : text);

    const summary = await runFullSync(h.context());

    const rows = await h.warehouse.db.selectFrom("replies").select(["id", "body_plain_text"]).orderBy("id").execute();
    expect({ failures: summary.failures.map((failure) => failure.stream), replies: rows }).toEqual({
      failures: [],
      replies: [
        { id: 1, body_plain_text: "Thanks,\tsee below\nBest" },
        { id: 2, body_plain_text: "Interested" },
      ],
    });
  });
});
