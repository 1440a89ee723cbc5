import { describe, expect, it } from "vitest";
import { LIFECYCLE_PATHS, PATHS } from "../../src/upstream/endpoints.ts";
import { Api, messageOf, useEmulator } from "../support/emulator.ts";

/**
 * A write request sent without any body must not answer `{"message": "body: is required"}`, which names
 * no field of the API. The required fields it lacks are `campaign_uid` (and `update_data` / `sequence_data`).
 *
 * contract A.2: "Every error body is `{"message": "..."}` with a human-readable reason that names the offending
 * field or state." ... "missing or out-of-range field | 400".
 * spec 4.2: "POST /api/v1/campaign/start/ | body: campaign_uid (string, required)" (same for pause, resume, cancel).
 * spec 4.3: "Top level: `campaign_uid` (string, required) and `update_data` (object, required)."
 *
 * The same emulator already names the field for DELETE email-sequence/ without an id ("id: is required, ...").
 */

const emulator = useEmulator({ apiKeys: ["a"], seed: 5 });
const api = () => new Api(emulator().url, "a");

describe("a write request without a body names the missing required field (contract A.2)", () => {
  it.each(Object.entries(LIFECYCLE_PATHS))("POST %s with no body answers 400 naming campaign_uid", async (_operation, path) => {
    const answer = await api().request("POST", path);
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toContain("campaign_uid");
  });

  it("POST campaign/start/ with Content-Type application/json and an empty body answers 400 naming campaign_uid", async () => {
    const answer = await api().send("POST", PATHS.campaignStart, { kind: "raw", text: "", contentType: "application/json" });
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toContain("campaign_uid");
  });

  it("PATCH campaign/ with no body answers 400 naming campaign_uid and update_data", async () => {
    const answer = await api().request("PATCH", PATHS.campaign);
    expect(answer.status).toBe(400);
    const message = messageOf(answer);
    expect(message).toContain("campaign_uid");
    expect(message).toContain("update_data");
  });

  it("POST email-sequence/ with no body answers 400 naming campaign_uid and sequence_data", async () => {
    const answer = await api().request("POST", PATHS.emailSequence);
    expect(answer.status).toBe(400);
    const message = messageOf(answer);
    expect(message).toContain("campaign_uid");
    expect(message).toContain("sequence_data");
  });
});
