import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../../src/emulator/server.ts";
import { API_KEY_HEADER, PATHS } from "../../../src/upstream/endpoints.ts";

/**
 * HTTP plumbing the black-box suite does not reach: the order of checks,
 * the less common body shapes, and the dropped-connection fault.
 */

let emulator: RunningEmulator;
let createdUid: string;

beforeAll(async () => {
  emulator = await startEmulator({ apiKeys: ["k"], seed: 3 });
  const page = (await (await call("GET", `${PATHS.campaigns}?limit=100`)).json()) as { data: { uid: string; status: string }[] };
  const created = page.data.filter((campaign) => campaign.status === "created");
  for (const campaign of created) {
    const full = (await (await call("GET", `${PATHS.campaign}?campaign_uid=${campaign.uid}`)).json()) as { settings: { scheduling_strategy: string } };
    if (full.settings.scheduling_strategy !== "single-message") createdUid = campaign.uid;
  }
});

afterAll(async () => {
  await emulator.close();
});

function call(method: string, path: string, init: { key?: string | null; body?: RequestInit["body"]; type?: string } = {}) {
  const headers: Record<string, string> = {};
  if (init.key !== null) headers[API_KEY_HEADER] = init.key ?? "k";
  if (init.type) headers["content-type"] = init.type;
  return fetch(new URL(path, emulator.url), { method, headers, body: init.body });
}

describe("order of checks", () => {
  it("a wrong method answers 405 before the key is looked at", async () => {
    const answer = await call("PUT", PATHS.campaigns, { key: null });
    expect(answer.status).toBe(405);
    expect(answer.headers.get("allow")).toContain("GET");
  });

  it("a missing key answers 401 before a malformed body is read", async () => {
    const answer = await call("POST", PATHS.campaignStart, { key: null, body: "{", type: "application/json" });
    expect(answer.status).toBe(401);
    expect(await answer.json()).toEqual({ message: "missing X-Api-Key header" });
  });

  it("an unknown method on a known path answers 405 {message}", async () => {
    const answer = await call("PROPFIND", PATHS.campaigns);
    expect(answer.status).toBe(405);
    expect(Object.keys((await answer.json()) as object)).toEqual(["message"]);
  });

  it("an unsupported content type answers 400 {message}", async () => {
    const answer = await call("POST", PATHS.campaignStart, { body: "campaign_uid", type: "text/plain" });
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { message: string }).message).toContain("content type");
  });
});

describe("form bodies", () => {
  const sequence = { order: "3", subject: "Hi", body: "Hello there, a short note.", next_message_days: "2" };

  it("sequence_data may come as flat top-level fields", async () => {
    const answer = await call("POST", PATHS.emailSequence, { body: new URLSearchParams({ campaign_uid: createdUid, ...sequence }) });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ order: 3, next_message_days: 2, email_content_type: "text/plain" });
  });

  it("sequence_data may come as JSON text in a multipart field", async () => {
    const form = new FormData();
    form.append("campaign_uid", createdUid);
    form.append("sequence_data", JSON.stringify({ order: 4, subject: "Hi", body: "<p>Hello</p>" }));
    const answer = await call("POST", PATHS.emailSequence, { body: form });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ order: 4, next_message_days: 0, email_content_type: "text/html" });
  });

  it("a broken multipart body answers 400", async () => {
    const answer = await call("POST", PATHS.emailSequence, { body: "--x\r\nnot a part", type: "multipart/form-data; boundary=x" });
    expect(answer.status).toBe(400);
    expect(Object.keys((await answer.json()) as object)).toEqual(["message"]);
  });
});

describe("faults", () => {
  it("a dropped connection sends its headers and part of the body, then closes", async () => {
    emulator.settings.faults = "hostile";
    let dropped = 0;
    try {
      for (let attempt = 0; attempt < 200 && dropped === 0; attempt++) {
        const answer = await call("GET", PATHS.workspaces);
        await answer.text().catch(() => {
          dropped++;
        });
      }
    } finally {
      emulator.settings.faults = "none";
    }
    expect(dropped).toBeGreaterThan(0);
  });
});
