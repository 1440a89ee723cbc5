import { beforeAll, describe, expect, it } from "vitest";
import { PATHS } from "../../src/upstream/endpoints.ts";
import * as resources from "../../src/upstream/resources.ts";
import { Api, createdCampaign, messageOf, snapshotAccount, useEmulator } from "../support/emulator.ts";

/**
 * DELETE email-sequence/?id=N with a malformed JSON body is not served as if the body were absent (the
 * sequence deleted, 200): the endpoint reads a JSON body ({"id": N}), and a malformed one is a client error.
 *
 * contract A.1: "10 | DELETE /api/v1/email-sequence/ | `id` (query); a JSON body `{"id": N}` is accepted too"
 * contract A.2: "malformed JSON/form body, missing or out-of-range field, bad query parameter ... | 400"
 */

const emulator = useEmulator({ apiKeys: ["a"], seed: 5 });
let api: Api;
let campaignUid: string;

beforeAll(async () => {
  api = new Api(emulator().url, "a");
  campaignUid = createdCampaign(await snapshotAccount(api)).summary.uid;
});

async function newSequence(): Promise<number> {
  const answer = await api.send("POST", PATHS.emailSequence, {
    kind: "json",
    value: { campaign_uid: campaignUid, sequence_data: { order: 7, subject: "Malformed", body: "Hello there, a short note." } },
  });
  expect(answer.status, answer.text).toBe(200);
  return (answer.json as { id: number }).id;
}

describe("DELETE email-sequence/ with a malformed JSON body (contract A.2: malformed JSON body is a 400)", () => {
  it.each(['{"id":', "{bad", "not json"])("?id=N with the JSON body %j answers 400 and keeps the sequence", async (text) => {
    const id = await newSequence();
    const answer = await api.request("DELETE", PATHS.emailSequence, { query: { id }, body: { kind: "raw", text, contentType: "application/json" } });
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toContain("body");
    expect((await api.get(PATHS.emailSequence, { id })).status).toBe(200);
    await api.ok(PATHS.emailSequence, { id }, resources.emailSequence);
  });
});
