import { beforeAll, describe, expect, it } from "vitest";
import { PATHS } from "../../src/upstream/endpoints.ts";
import * as resources from "../../src/upstream/resources.ts";
import {
  Api,
  bodyOf,
  campaignWithStatus,
  createdCampaign,
  formFields,
  messageOf,
  parseStrict,
  schedulesOf,
  snapshotAccount,
  useEmulator,
  type AccountSnapshot,
  type Encoding,
} from "../support/emulator.ts";

/** Email sequences (#8 create, #9 get, #10 delete): spec 4.4 and contract A.1, A.5. */

const emulator = useEmulator({ apiKeys: ["a"], seed: 17 });
let api: Api;
let seed: AccountSnapshot;
let createdUid: string;

beforeAll(async () => {
  api = new Api(emulator().url, "a");
  seed = await snapshotAccount(api);
  createdUid = createdCampaign(seed).summary.uid;
});

const validSequence = () => ({ order: 2, subject: "Following up 👋", body: "Hi {{first_name}}, just checking in.", next_message_days: 4 });

function create(encoding: Encoding, sequenceData: Record<string, unknown>, campaignUid = createdUid) {
  return api.send("POST", PATHS.emailSequence, bodyOf(encoding, { campaign_uid: campaignUid, sequence_data: sequenceData }));
}

describe.each(["json", "form", "multipart"] as const)("create in %s", (encoding) => {
  it("answers the full sequence with computed score, verdict, suggestions, label and content type", async () => {
    const answer = await create(encoding, validSequence());
    expect(answer.status).toBe(200);
    const sequence = parseStrict(resources.emailSequence, answer.json, "sequence");
    expect(sequence).toMatchObject(validSequence());
    expect(sequence.email_content_type).toBe("text/plain");
    expect(answer.json).toHaveProperty("suggestions");
    expect(await api.ok(PATHS.emailSequence, { id: sequence.id }, resources.emailSequence)).toEqual(sequence);
  });

  it("a body with HTML tags is text/html", async () => {
    const answer = await create(encoding, { ...validSequence(), body: "<p>Hello <b>there</b></p>" });
    expect(answer.status).toBe(200);
    expect(parseStrict(resources.emailSequence, answer.json, "sequence").email_content_type).toBe("text/html");
  });

  it.each(["order", "subject", "body"])("%s missing answers 400 naming it", async (field) => {
    const data: Record<string, unknown> = validSequence();
    delete data[field];
    const answer = await create(encoding, data);
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toContain(field);
  });

  it("next_message_days defaults to 0", async () => {
    const data: Record<string, unknown> = validSequence();
    delete data.next_message_days;
    const answer = await create(encoding, data);
    expect(answer.status).toBe(200);
    expect(parseStrict(resources.emailSequence, answer.json, "sequence").next_message_days).toBe(0);
  });

  it.each([0, 32_767])("next_message_days %s is accepted", async (days) => {
    const answer = await create(encoding, { ...validSequence(), next_message_days: days });
    expect(answer.status).toBe(200);
    expect(parseStrict(resources.emailSequence, answer.json, "sequence").next_message_days).toBe(days);
  });

  it.each([-1, 32_768, 1.5, "soon"])("next_message_days %s answers 400 naming it", async (days) => {
    const answer = await create(encoding, { ...validSequence(), next_message_days: days });
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toContain("next_message_days");
  });

  it.each([-2_147_483_648, 2_147_483_647])("order %s (int32 bound) is accepted", async (order) => {
    const answer = await create(encoding, { ...validSequence(), order });
    expect(answer.status).toBe(200);
    expect(parseStrict(resources.emailSequence, answer.json, "sequence").order).toBe(order);
  });

  it.each([2_147_483_648, -2_147_483_649, 1.5, "first"])("order %s answers 400 naming order", async (order) => {
    const answer = await create(encoding, { ...validSequence(), order });
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toContain("order");
  });

  it("campaign_uid missing answers 400 naming it", async () => {
    const answer = await api.send("POST", PATHS.emailSequence, bodyOf(encoding, { sequence_data: validSequence() }));
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toContain("campaign_uid");
  });

  it("sequence_data missing answers 400 naming it", async () => {
    const answer = await api.send("POST", PATHS.emailSequence, bodyOf(encoding, { campaign_uid: createdUid }));
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toContain("sequence_data");
  });

  it("an unknown campaign answers 404", async () => {
    const answer = await create(encoding, validSequence(), "no-such-campaign");
    expect(answer.status).toBe(404);
    messageOf(answer);
  });
});

describe("create with a form body whose media type is spelled in another case", () => {
  // Media types are case-insensitive (RFC 9110 §8.3.1); parameters such as charset change nothing.
  it.each(["Application/X-WWW-Form-Urlencoded", "APPLICATION/X-WWW-FORM-URLENCODED; Charset=UTF-8"])("%s reads the form's strings as a form's", async (contentType) => {
    const text = new URLSearchParams(formFields({ campaign_uid: createdUid, sequence_data: validSequence() })).toString();
    const answer = await api.send("POST", PATHS.emailSequence, { kind: "raw", text, contentType });
    expect(answer.status, answer.text).toBe(200);
    expect(parseStrict(resources.emailSequence, answer.json, "sequence")).toMatchObject(validSequence());
  });
});

describe("create with a body that cannot be read (contract A.2: a malformed JSON or form body is a 400)", () => {
  const formText = (subject: string) => `campaign_uid=${createdUid}&sequence_data[order]=1&sequence_data[subject]=${subject}&sequence_data[body]=x`;

  it.each([
    ["a broken percent-escape", "%E0%A4%A"],
    ["escapes that are not UTF-8", "bad%FF"],
    ["a percent sign without hex digits", "50%ZZ"],
  ])("a form body with %s answers 400 naming the body and the field, instead of storing the escape as text", async (_label, subject) => {
    const answer = await api.send("POST", PATHS.emailSequence, { kind: "raw", text: formText(subject), contentType: "application/x-www-form-urlencoded" });
    expect(answer.status, answer.text.slice(0, 200)).toBe(400);
    expect(messageOf(answer)).toMatch(/^body: sequence_data\[subject\]: /);
  });

  it("a JSON body that is not UTF-8 (RFC 8259 §8.1) answers 400 instead of storing U+FFFD", async () => {
    const encoder = new TextEncoder();
    const prefix = encoder.encode(`{"campaign_uid":"${createdUid}","sequence_data":{"order":1,"subject":"bad `);
    const suffix = encoder.encode(` byte","body":"x"}}`);
    const answer = await api.send("POST", PATHS.emailSequence, { kind: "raw", text: new Uint8Array([...prefix, 0xff, 0xfe, ...suffix]), contentType: "application/json" });
    expect(answer.status, answer.text.slice(0, 200)).toBe(400);
    expect(messageOf(answer)).toContain("UTF-8");
  });

  it("a multipart file part that is not UTF-8 answers 400 naming it", async () => {
    const boundary = "coldsync-boundary";
    const encoder = new TextEncoder();
    const field = (name: string, value: string) => `--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const head = encoder.encode(
      `${field("campaign_uid", createdUid)}${field("sequence_data[order]", "1")}${field("sequence_data[body]", "x")}` +
        `--${boundary}\r\ncontent-disposition: form-data; name="sequence_data[subject]"; filename="subject.txt"\r\ncontent-type: application/octet-stream\r\n\r\nbad `,
    );
    const tail = encoder.encode(`\r\n--${boundary}--\r\n`);
    const answer = await api.send("POST", PATHS.emailSequence, {
      kind: "raw",
      text: new Uint8Array([...head, 0xff, ...tail]),
      contentType: `multipart/form-data; boundary=${boundary}`,
    });
    expect(answer.status, answer.text.slice(0, 200)).toBe(400);
    expect(messageOf(answer)).toMatch(/^body: sequence_data\[subject\]: /);
  });

  /** Sends a multipart create whose last part, named `name` (the subject), has `partHeaders` and holds `bytes`. */
  function multipartSubject(bytes: number[], partHeaders = "", name = "sequence_data[subject]") {
    const boundary = "coldsync-boundary";
    const encoder = new TextEncoder();
    const field = (fieldName: string, value: string) => `--${boundary}\r\ncontent-disposition: form-data; name="${fieldName}"\r\n\r\n${value}\r\n`;
    const head = encoder.encode(`${field("campaign_uid", createdUid)}${field("sequence_data[order]", "1")}${field("sequence_data[body]", "x")}--${boundary}\r\ncontent-disposition: form-data; name="`);
    const tail = encoder.encode(`\r\n--${boundary}--\r\n`);
    const text = new Uint8Array([...head, ...encoder.encode(name), ...encoder.encode(`"\r\n${partHeaders}\r\n`), ...bytes, ...tail]);
    return api.send("POST", PATHS.emailSequence, { kind: "raw", text, contentType: `multipart/form-data; boundary=${boundary}` });
  }

  it("a multipart (non-file) field whose bytes are not UTF-8 answers 400 naming it, instead of storing U+FFFD", async () => {
    const answer = await multipartSubject([...new TextEncoder().encode("bad "), 0xff]);
    expect(answer.status, answer.text.slice(0, 200)).toBe(400);
    expect(messageOf(answer)).toMatch(/^body: sequence_data\[subject\]: .*not UTF-8/);
  });

  it("a multipart field name whose bytes are not UTF-8 answers 400 naming the body", async () => {
    const answer = await api.send("POST", PATHS.emailSequence, {
      kind: "raw",
      text: new Uint8Array([
        ...new TextEncoder().encode(`--b\r\ncontent-disposition: form-data; name="campaign_uid"\r\n\r\n${createdUid}\r\n--b\r\ncontent-disposition: form-data; name="x`),
        0xff,
        ...new TextEncoder().encode(`"\r\n\r\ny\r\n--b--\r\n`),
      ]),
      contentType: "multipart/form-data; boundary=b",
    });
    expect(answer.status, answer.text.slice(0, 200)).toBe(400);
    expect(messageOf(answer)).toMatch(/^body: .*not UTF-8/);
  });

  it.each([
    ["no content type", ""],
    ["text/plain; charset=utf-8", "content-type: text/plain; charset=utf-8\r\n"],
    ["text/plain; charset=UTF-8", "content-type: text/plain; charset=UTF-8\r\n"],
  ])("a multipart field in UTF-8 with %s reads as sent, emoji and accents too", async (_label, partHeaders) => {
    const subject = "Café 👋 naïve — 日本";
    const answer = await multipartSubject([...new TextEncoder().encode(subject)], partHeaders);
    expect(answer.status, answer.text.slice(0, 200)).toBe(200);
    expect(parseStrict(resources.emailSequence, answer.json, "sequence").subject).toBe(subject);
  });

  it("a multipart field name in UTF-8 outside ASCII is not mistaken for bytes that are not UTF-8", async () => {
    const answer = await multipartSubject([...new TextEncoder().encode("Hi")], "", "sequence_data[sujet_é👋]");
    expect(answer.text).not.toContain("UTF-8");
  });

  it("a multipart part declaring another charset is read as UTF-8: bytes that are not UTF-8 answer 400 naming it", async () => {
    const answer = await multipartSubject([0x43, 0x61, 0x66, 0xe9], "content-type: text/plain; charset=iso-8859-1\r\n");
    expect(answer.status, answer.text.slice(0, 200)).toBe(400);
    expect(messageOf(answer)).toMatch(/^body: sequence_data\[subject\]: .*not UTF-8/);
  });

  it("a percent sign in a multipart value is text, not an escape", async () => {
    const answer = await create("multipart", { ...validSequence(), subject: "50%ZZ off %E0%A4%A" });
    expect(answer.status, answer.text.slice(0, 200)).toBe(200);
    expect(parseStrict(resources.emailSequence, answer.json, "sequence").subject).toBe("50%ZZ off %E0%A4%A");
  });
});

describe("create outside created", () => {
  it.each(["creating", "scheduled", "running", "paused", "complete", "cancelled", "failed"] as const)("a campaign in %s answers 409 naming its state and the one required", async (status) => {
    const answer = await create("json", validSequence(), campaignWithStatus(seed, status).summary.uid);
    expect(answer.status).toBe(409);
    const message = messageOf(answer);
    expect(message).toContain(`campaign is ${status};`);
    expect(message).toMatch(/allowed only in state created$/);
  });

  it("malformed JSON answers 400", async () => {
    const answer = await api.send("POST", PATHS.emailSequence, { kind: "raw", text: "{not json", contentType: "application/json" });
    expect(answer.status).toBe(400);
    messageOf(answer);
  });
});

describe("get and delete", () => {
  async function fresh(): Promise<number> {
    const answer = await create("json", validSequence());
    return parseStrict(resources.emailSequence, answer.json, "sequence").id;
  }

  it("GET by id of every sequence schedules point at parses", async () => {
    expect(seed.sequences.length).toBeGreaterThan(0);
    for (const sequence of seed.sequences) expect(await api.ok(PATHS.emailSequence, { id: sequence.id }, resources.emailSequence)).toEqual(sequence);
  });

  it("GET of an unknown id answers 404", async () => {
    const answer = await api.get(PATHS.emailSequence, { id: 2_000_000_003 });
    expect(answer.status).toBe(404);
    messageOf(answer);
  });

  it("DELETE by query id answers 200 {message}, then the sequence is gone", async () => {
    const id = await fresh();
    const answer = await api.request("DELETE", PATHS.emailSequence, { query: { id } });
    expect(answer.status).toBe(200);
    messageOf(answer);
    expect((await api.get(PATHS.emailSequence, { id })).status).toBe(404);
  });

  it('DELETE with a JSON body {"id": N} answers 200, then the sequence is gone', async () => {
    const id = await fresh();
    const answer = await api.send("DELETE", PATHS.emailSequence, { kind: "json", value: { id } });
    expect(answer.status).toBe(200);
    messageOf(answer);
    expect((await api.get(PATHS.emailSequence, { id })).status).toBe(404);
  });

  it("DELETE twice answers 404 the second time", async () => {
    const id = await fresh();
    expect((await api.request("DELETE", PATHS.emailSequence, { query: { id } })).status).toBe(200);
    const again = await api.request("DELETE", PATHS.emailSequence, { query: { id } });
    expect(again.status).toBe(404);
    messageOf(again);
  });

  it("DELETE of an unknown id answers 404", async () => {
    const answer = await api.request("DELETE", PATHS.emailSequence, { query: { id: 2_000_000_005 } });
    expect(answer.status).toBe(404);
    messageOf(answer);
  });

  describe.each(["99999999999", "99999999999999999999"])("an id of %s, outside int32, names nothing", (id) => {
    it("GET answers 404 naming it", async () => {
      const answer = await api.get(PATHS.emailSequence, { id });
      expect(answer.status).toBe(404);
      expect(messageOf(answer)).toBe(`id: no email sequence ${id}`);
    });

    it("DELETE by query answers 404 naming it", async () => {
      const answer = await api.request("DELETE", PATHS.emailSequence, { query: { id } });
      expect(answer.status).toBe(404);
      expect(messageOf(answer)).toBe(`id: no email sequence ${id}`);
    });

  });

  // Contract A.1: the id travels in the query, or in a JSON body; spec 2.1 takes forms only for update campaign and create email sequence.
  it.each(["form", "multipart"] as const)("DELETE with the id in a %s body answers 400 naming the body, and keeps the sequence", async (encoding) => {
    const id = await fresh();
    const answer = await api.send("DELETE", PATHS.emailSequence, bodyOf(encoding, { id }));
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toMatch(/^body: must be JSON/);
    expect((await api.get(PATHS.emailSequence, { id })).status).toBe(200);
  });

  it('DELETE with a JSON body {"id": 99999999999} answers 404 naming it', async () => {
    const answer = await api.send("DELETE", PATHS.emailSequence, { kind: "json", value: { id: 99_999_999_999 } });
    expect(answer.status).toBe(404);
    expect(messageOf(answer)).toBe("id: no email sequence 99999999999");
  });

  it('DELETE with a JSON body {"id": 1.5} answers 400 naming id', async () => {
    const answer = await api.send("DELETE", PATHS.emailSequence, { kind: "json", value: { id: 1.5 } });
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toContain("id");
  });

  it("DELETE id=abc answers 400 naming id", async () => {
    const answer = await api.request("DELETE", PATHS.emailSequence, { query: { id: "abc" } });
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toContain("id");
  });

  it.each(["scheduled", "running", "paused", "complete", "cancelled", "failed"] as const)(
    "DELETE of a sequence of a campaign in %s answers 409 naming its state and the one required, and keeps it",
    async (status) => {
      const id = [...new Set(schedulesOf(campaignWithStatus(seed, status).leads).map((schedule) => schedule.email_data.id))][0];
      if (id === undefined) throw new Error(`the ${status} campaign has no discoverable sequence`);
      const answer = await api.request("DELETE", PATHS.emailSequence, { query: { id } });
      expect(answer.status).toBe(409);
      const message = messageOf(answer);
      expect(message).toContain(`campaign is ${status};`);
      expect(message).toMatch(/allowed only in state created$/);
      expect((await api.get(PATHS.emailSequence, { id })).status).toBe(200);
    },
  );
});
