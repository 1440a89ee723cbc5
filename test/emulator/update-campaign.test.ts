import { beforeAll, describe, expect, it } from "vitest";
import { PATHS } from "../../src/upstream/endpoints.ts";
import * as resources from "../../src/upstream/resources.ts";
import {
  Api,
  bodyOf,
  campaignWithStatus,
  createdCampaign,
  domainsOfWorkspace,
  formFields,
  messageOf,
  parseStrict,
  sequenceCountOf,
  snapshotAccount,
  useEmulator,
  validUpdateData,
  type AccountSnapshot,
  type CampaignData,
  type Encoding,
} from "../support/emulator.ts";

/** Update campaign (#3): spec 4.3 and contract A.5, each rule broken alone, in every body encoding. */

const emulator = useEmulator({ apiKeys: ["a", "b"], seed: 13 });
let api: Api;
let seed: AccountSnapshot;
let foreignDomainId: number;
const targets = {} as Record<"none" | "one" | "many", CampaignData>;

beforeAll(async () => {
  api = new Api(emulator().url, "a");
  const [mine, theirs] = await Promise.all([snapshotAccount(api), snapshotAccount(new Api(emulator().url, "b"))]);
  seed = mine;
  targets.none = createdCampaign(seed, (n) => n === 0);
  targets.one = createdCampaign(seed, (n) => n === 1);
  targets.many = createdCampaign(seed, (n) => n >= 2);
  const domain = theirs.domains[0];
  if (!domain) throw new Error("account b has no domain");
  foreignDomainId = domain.id;
});

type Target = keyof typeof targets;
type UpdateData = Record<string, unknown>;

function validFor(target: Target): UpdateData {
  const data = targets[target];
  return validUpdateData(sequenceCountOf(data), domainsOfWorkspace(seed, data.campaign.workspace_id).slice(0, 2));
}

function patch(encoding: Encoding, body: Record<string, unknown>) {
  return api.send("PATCH", PATHS.campaign, bodyOf(encoding, body));
}

function update(encoding: Encoding, target: Target, change: (data: UpdateData) => void = () => {}) {
  const data = validFor(target);
  change(data);
  return patch(encoding, { campaign_uid: targets[target].summary.uid, update_data: data });
}

const BOOLEANS = [
  "single_subject",
  "add_unsub_link",
  "click_tracking_enabled",
  "open_tracking_enabled",
  "skip_dangerous_emails",
  "skip_disposable_emails",
  "skip_catchall_emails",
  "skip_full_inbox_emails",
  "skip_invalid_emails",
  "forward_negative_emails",
  "forward_netural_emails",
] as const;

const REQUIRED = ["name", "daily_email_limit", "single_subject", "scheduling_strategy", "from_time", "to_time", "time_zone", ...BOOLEANS];
const REQUIRED_ALL = [...new Set([...REQUIRED, "unsub_link_type", "custom_unsub_text", "sending_domains"])];

interface Violation {
  rule: string;
  field: string;
  target?: Target;
  change: (data: UpdateData) => void;
}

const set =
  (field: string, value: unknown) =>
  (data: UpdateData): void => {
    data[field] = value;
  };

const violations: Violation[] = [
  { rule: "name empty", field: "name", change: set("name", "") },
  { rule: "name whitespace only", field: "name", change: set("name", "  \t ") },
  // U+0085 NEXT LINE and U+2028 LINE SEPARATOR have the Unicode White_Space property; JavaScript's \s leaves U+0085 out.
  { rule: "name of U+0085 only (Unicode White_Space)", field: "update_data.name", change: set("name", "\u0085\u0085") },
  { rule: "name of U+2028 and U+3000 only (Unicode White_Space)", field: "update_data.name", change: set("name", "\u2028\u3000") },
  { rule: "name of 301 characters", field: "name", change: set("name", "n".repeat(301)) },
  { rule: "reply_to_address not an email", field: "reply_to_address", change: set("reply_to_address", "not-an-email") },
  { rule: "reply_to_address over 254 characters", field: "reply_to_address", change: set("reply_to_address", `${"r".repeat(250)}@example.com`) },
  { rule: "daily_email_limit 9", field: "daily_email_limit", change: set("daily_email_limit", 9) },
  { rule: "daily_email_limit 101", field: "daily_email_limit", change: set("daily_email_limit", 101) },
  { rule: 'daily_email_limit "x"', field: "daily_email_limit", change: set("daily_email_limit", "x") },
  { rule: "daily_email_limit 50.5", field: "daily_email_limit", change: set("daily_email_limit", 50.5) },
  {
    rule: "skip_days with 7 items",
    field: "skip_days",
    change: set("skip_days", ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]),
  },
  { rule: "skip_days with an unknown day", field: "skip_days", change: set("skip_days", ["Monday", "Funday"]) },
  { rule: "scheduling_strategy testing", field: "scheduling_strategy", change: set("scheduling_strategy", "testing") },
  { rule: "scheduling_strategy unknown", field: "scheduling_strategy", change: set("scheduling_strategy", "turbo") },
  { rule: "single-message with no sequence", field: "scheduling_strategy", target: "none", change: set("scheduling_strategy", "single-message") },
  { rule: "single-message with two or more sequences", field: "scheduling_strategy", target: "many", change: set("scheduling_strategy", "single-message") },
  ...["sequential", "no-followup-limit", "smart-queue"].map((strategy) => ({
    rule: `${strategy} with exactly one sequence`,
    field: "scheduling_strategy",
    target: "one" as const,
    change: set("scheduling_strategy", strategy),
  })),
  { rule: "from_time without leading zero", field: "from_time", change: set("from_time", "8:00:00") },
  { rule: "from_time 25:00:00", field: "from_time", change: set("from_time", "25:00:00") },
  { rule: "from_time without seconds", field: "from_time", change: set("from_time", "08:00") },
  { rule: "to_time 17:60:00", field: "to_time", change: set("to_time", "17:60:00") },
  { rule: "to_time 24:00:00", field: "to_time", change: set("to_time", "24:00:00") },
  {
    rule: "from_time and to_time less than 3 hours apart",
    field: "_time",
    change: (data) => Object.assign(data, { from_time: "09:00:00", to_time: "11:59:59" }),
  },
  {
    rule: "a window through midnight shorter than 3 hours",
    field: "_time",
    change: (data) => Object.assign(data, { from_time: "23:00:00", to_time: "01:00:00" }),
  },
  { rule: "name of 301 characters, each two code units", field: "name", change: set("name", "\u{1F4E8}".repeat(301)) },
  { rule: "time_zone not an IANA name", field: "time_zone", change: set("time_zone", "Mars/Olympus_Mons") },
  { rule: "time_zone in the wrong case", field: "time_zone", change: set("time_zone", "europe/paris") },
  { rule: "time_zone an offset", field: "time_zone", change: set("time_zone", "+02:00") },
  { rule: "time_zone empty", field: "time_zone", change: set("time_zone", "") },
  // ICU and Java legacy abbreviations that the runtime resolves but the IANA database does not define.
  ...["PST", "IST", "JST", "CST", "AET", "BST"].map((zone) => ({ rule: `time_zone ${zone}, not an IANA name`, field: "time_zone", change: set("time_zone", zone) })),
  // Names the IANA database removed (SystemV/* and US/Pacific-New in 2020b, Canada/East-Saskatchewan in 2017c) that ICU still resolves.
  ...["SystemV/EST5", "SystemV/AST4ADT", "US/Pacific-New", "us/pacific-new", "Canada/East-Saskatchewan"].map((zone) => ({
    rule: `time_zone ${zone}, no longer an IANA name`,
    field: "update_data.time_zone",
    change: set("time_zone", zone),
  })),
  { rule: "unsub_link_type unknown", field: "unsub_link_type", change: set("unsub_link_type", "sometimes") },
  {
    rule: "unsub_link_type custom without add_unsub_link",
    field: "unsub_link_type",
    change: (data) => Object.assign(data, { add_unsub_link: false, unsub_link_type: "custom", custom_unsub_text: "Bye" }),
  },
  { rule: "custom_unsub_text non-empty with unsub_link_type auto", field: "custom_unsub_text", change: set("custom_unsub_text", "Bye") },
  { rule: "sending_domains of strings", field: "sending_domains", change: set("sending_domains", ["a"]) },
  { rule: "sending_domains of fractions", field: "sending_domains", change: set("sending_domains", [1.5]) },
  { rule: "sending_domains with an unknown id", field: "sending_domains", change: set("sending_domains", [2_147_483_000]) },
  ...BOOLEANS.map((field) => ({ rule: `${field} not a boolean`, field, change: set(field, "yes") })),
  ...REQUIRED_ALL.map((field) => ({
    rule: `${field} missing`,
    field,
    change: (data: UpdateData) => {
      delete data[field];
    },
  })),
];

describe.each(["json", "form", "multipart"] as const)("in %s", (encoding) => {
  it("a valid update answers 200 with the full campaign holding the new values, and sticks", async () => {
    const target = targets.many;
    const data = validFor("many");
    data.name = `Renamed in ${encoding} — 変更 🚀`;
    data.daily_email_limit = encoding === "json" ? 10 : encoding === "form" ? 55 : 100;
    const answer = await patch(encoding, { campaign_uid: target.summary.uid, update_data: data });
    expect(answer.status).toBe(200);
    const campaign = parseStrict(resources.campaign, answer.json, "updated campaign");
    expect(campaign.settings).toMatchObject(data);
    expect(campaign).toMatchObject({ uid: target.campaign.uid, status: "created", created_on: target.campaign.created_on, workspace_id: target.campaign.workspace_id });
    const reread = await api.ok(PATHS.campaign, { campaign_uid: target.summary.uid }, resources.campaign);
    expect(reread).toEqual(campaign);
  });

  it.each(violations)("$rule answers 400 naming the field", async ({ field, target, change }) => {
    const answer = await update(encoding, target ?? "many", change);
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toContain(field);
  });

  it("sending_domains of another account answers 400 naming the field", async () => {
    const answer = await update(encoding, "many", set("sending_domains", [foreignDomainId]));
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toContain("sending_domains");
  });

  it("a sending domain that is being deleted answers 400 naming the field, so no campaign names a domain that then vanishes", async () => {
    const deleting = seed.domains.find((domain) => domain.status === "deleting");
    if (!deleting) throw new Error("the seed has no domain being deleted");
    const answer = await update(encoding, "many", set("sending_domains", [deleting.id]));
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toMatch(/^update_data\.sending_domains: .*being deleted/);
  });

  it("every violated rule is named in one 400 (contract A.5): the strategy for the sequence count and an unknown sending domain", async () => {
    const answer = await update(encoding, "many", (data) => Object.assign(data, { scheduling_strategy: "single-message", sending_domains: [2_147_483_000] }));
    expect(answer.status).toBe(400);
    const message = messageOf(answer);
    expect(message).toContain("update_data.scheduling_strategy: single-message needs exactly one email sequence");
    expect(message).toContain("update_data.sending_domains: unknown domain id(s) 2147483000");
  });

  it("an unknown sending domain and a domain being deleted are both named", async () => {
    const deleting = seed.domains.find((domain) => domain.status === "deleting");
    if (!deleting) throw new Error("the seed has no domain being deleted");
    const answer = await update(encoding, "many", set("sending_domains", [2_147_483_000, deleting.id]));
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toMatch(/unknown domain id\(s\) 2147483000; update_data\.sending_domains: domain id\(s\) \d+ being deleted/);
  });

  it("a rule of the body's schema and a cross-check against the campaign are named in the same 400", async () => {
    const answer = await update(encoding, "one", (data) => Object.assign(data, { daily_email_limit: 5, scheduling_strategy: "sequential", sending_domains: [2_147_483_000] }));
    expect(answer.status).toBe(400);
    const message = messageOf(answer);
    expect(message).toContain("update_data.daily_email_limit: ");
    expect(message).toContain("update_data.scheduling_strategy: the campaign has exactly one email sequence");
    expect(message).toContain("update_data.sending_domains: unknown domain id(s) 2147483000");
  });

  it("a rejected update changes nothing", async () => {
    const before = await api.ok(PATHS.campaign, { campaign_uid: targets.one.summary.uid }, resources.campaign);
    const answer = await update(encoding, "one", (data) => Object.assign(data, { name: "Never stored", daily_email_limit: 5 }));
    expect(answer.status).toBe(400);
    expect(await api.ok(PATHS.campaign, { campaign_uid: targets.one.summary.uid }, resources.campaign)).toEqual(before);
  });

  it("campaign_uid missing answers 400 naming campaign_uid", async () => {
    const answer = await patch(encoding, { update_data: validFor("many") });
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toContain("campaign_uid");
  });

  it("update_data missing answers 400 naming update_data", async () => {
    const answer = await patch(encoding, { campaign_uid: targets.many.summary.uid });
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toContain("update_data");
  });

  it("an unknown campaign answers 404", async () => {
    const answer = await patch(encoding, { campaign_uid: "no-such-campaign", update_data: validFor("many") });
    expect(answer.status).toBe(404);
    messageOf(answer);
  });

  describe("accepted edge values", () => {
    const accepted: [string, Target, (data: UpdateData) => void][] = [
      ["daily_email_limit 10", "many", set("daily_email_limit", 10)],
      ["daily_email_limit 100", "many", set("daily_email_limit", 100)],
      ["a name of 300 characters", "many", set("name", "n".repeat(300))],
      ["a name of 300 characters, each two code units", "many", set("name", "\u{1F4E8}".repeat(300))],
      // U+FEFF is a format character, not Unicode White_Space, although JavaScript's \s counts it as space.
      ["a name of U+FEFF only, which is not whitespace", "many", set("name", "\uFEFF")],
      ["reply_to_address null", "many", set("reply_to_address", null)],
      // Any atext in the local part, any hostname label in the domain (a punycode top-level domain: .рф).
      ...["info@example.xn--p1ai", "sales=eu@example.com", "team#7@example.com"].map(
        (address): [string, Target, (data: UpdateData) => void] => [`reply_to_address ${address}`, "many", set("reply_to_address", address)],
      ),
      ["skip_days empty", "many", set("skip_days", [])],
      ["skip_days with 6 items", "many", set("skip_days", ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"])],
      ["sending_domains empty", "many", set("sending_domains", [])],
      ["a window of exactly 3 hours", "many", (data) => Object.assign(data, { from_time: "09:00:00", to_time: "12:00:00" })],
      ["a window of 4 hours through midnight", "many", (data) => Object.assign(data, { from_time: "22:00:00", to_time: "02:00:00" })],
      ["time_zone UTC", "many", set("time_zone", "UTC")],
      ["time_zone CET, an IANA name without a region", "many", set("time_zone", "CET")],
      ["time_zone PST8PDT, an IANA name without a region", "many", set("time_zone", "PST8PDT")],
      ["time_zone Japan, an IANA link without a region", "many", set("time_zone", "Japan")],
      ["time_zone Etc/GMT+5", "many", set("time_zone", "Etc/GMT+5")],
      ["time_zone US/Eastern, an IANA link", "many", set("time_zone", "US/Eastern")],
      ["time_zone America/Argentina/Buenos_Aires", "many", set("time_zone", "America/Argentina/Buenos_Aires")],
      ["custom unsubscribe text", "many", (data) => Object.assign(data, { unsub_link_type: "custom", custom_unsub_text: "Not interested? Click here" })],
      // Spec 4.3 sets no rule on the text of a custom link, so neither does the emulator (contract A.5).
      ["custom unsubscribe link with empty text", "many", (data) => Object.assign(data, { unsub_link_type: "custom", custom_unsub_text: "" })],
      ["custom unsubscribe link with blank text", "many", (data) => Object.assign(data, { unsub_link_type: "custom", custom_unsub_text: "   " })],
      ["single-message with exactly one sequence", "one", set("scheduling_strategy", "single-message")],
      ["no-followup-limit with two or more sequences", "many", set("scheduling_strategy", "no-followup-limit")],
      ["smart-queue with no sequence", "none", set("scheduling_strategy", "smart-queue")],
      ["sequential with no sequence", "none", set("scheduling_strategy", "sequential")],
    ];
    it.each(accepted)("%s answers 200", async (_label, target, change) => {
      const answer = await update(encoding, target, change);
      expect(answer.status, answer.text.slice(0, 200)).toBe(200);
      const data = validFor(target);
      change(data);
      expect(parseStrict(resources.campaign, answer.json, "campaign").settings).toMatchObject(data);
    });

    // Spec 4.3 sets no rule against naming an item twice ("array of day names, at most 6 items"; "array of integer"),
    // so neither does the emulator (contract A.5); the arrays are sets, so each value is stored once.
    it("skip_days naming a day twice answers 200 and stores the day once", async () => {
      const answer = await update(encoding, "many", set("skip_days", ["Saturday", "Sunday", "Saturday"]));
      expect(answer.status, answer.text.slice(0, 200)).toBe(200);
      expect(parseStrict(resources.campaign, answer.json, "campaign").settings.skip_days).toEqual(["Saturday", "Sunday"]);
    });

    it("sending_domains naming a domain twice answers 200 and stores the domain once", async () => {
      const domains = domainsOfWorkspace(seed, targets.many.campaign.workspace_id).slice(0, 2);
      const [first] = domains;
      if (first === undefined) throw new Error("the campaign's workspace has no sending domain to name twice");
      const answer = await update(encoding, "many", set("sending_domains", [first, ...domains, first]));
      expect(answer.status, answer.text.slice(0, 200)).toBe(200);
      expect(parseStrict(resources.campaign, answer.json, "campaign").settings.sending_domains).toEqual(domains);
    });

    it("reply_to_address omitted defaults to null", async () => {
      const answer = await update(encoding, "many", (data) => {
        delete data.reply_to_address;
      });
      expect(answer.status).toBe(200);
      expect(parseStrict(resources.campaign, answer.json, "campaign").settings.reply_to_address).toBeNull();
    });
  });
});

describe("body and state errors", () => {
  it("malformed JSON answers 400 {message}", async () => {
    const answer = await api.send("PATCH", PATHS.campaign, { kind: "raw", text: '{"campaign_uid": "x", "update_data": {', contentType: "application/json" });
    expect(answer.status).toBe(400);
    messageOf(answer);
  });

  it("update_data that is not an object answers 400 naming update_data", async () => {
    const answer = await patch("json", { campaign_uid: targets.many.summary.uid, update_data: "everything" });
    expect(answer.status).toBe(400);
    expect(messageOf(answer)).toContain("update_data");
  });

  it("a JSON body that is an array answers 400", async () => {
    const answer = await api.send("PATCH", PATHS.campaign, { kind: "json", value: [] });
    expect(answer.status).toBe(400);
    messageOf(answer);
  });

  it("a form body with a broken percent-escape in update_data[name] answers 400 naming the field (contract A.2: malformed form body)", async () => {
    const text = new URLSearchParams(formFields({ campaign_uid: targets.many.summary.uid, update_data: { ...validFor("many"), name: "__NAME__" } }))
      .toString()
      .replace("__NAME__", "Spring%ZZ");
    const answer = await api.send("PATCH", PATHS.campaign, { kind: "raw", text, contentType: "application/x-www-form-urlencoded" });
    expect(answer.status, answer.text.slice(0, 200)).toBe(400);
    expect(messageOf(answer)).toMatch(/^body: update_data\[name\]: /);
  });

  it("a form may carry update_data as JSON text", async () => {
    const data = { ...validFor("many"), name: "Sent as JSON text in a form" };
    const answer = await api.send("PATCH", PATHS.campaign, {
      kind: "form",
      fields: [
        ["campaign_uid", targets.many.summary.uid],
        ["update_data", JSON.stringify(data)],
      ],
    });
    expect(answer.status, answer.text.slice(0, 200)).toBe(200);
    expect(parseStrict(resources.campaign, answer.json, "campaign").settings).toMatchObject(data);
  });

  // Media types are case-insensitive (RFC 9110 §8.3.1); parameters such as charset change nothing.
  it.each(["Application/X-WWW-Form-Urlencoded", "APPLICATION/X-WWW-FORM-URLENCODED; Charset=UTF-8"])("a form body sent as %s is read as a form", async (contentType) => {
    const data = { ...validFor("many"), name: "Sent with the media type in capitals" };
    const text = new URLSearchParams(formFields({ campaign_uid: targets.many.summary.uid, update_data: data })).toString();
    const answer = await api.send("PATCH", PATHS.campaign, { kind: "raw", text, contentType });
    expect(answer.status, answer.text.slice(0, 200)).toBe(200);
    expect(parseStrict(resources.campaign, answer.json, "campaign").settings).toMatchObject(data);
  });

  it("the ground truth follows the new sending_domains", async () => {
    const domains = domainsOfWorkspace(seed, targets.many.campaign.workspace_id);
    expect(domains.length).toBeGreaterThan(0);
    const answer = await update("json", "many", set("sending_domains", domains));
    expect(answer.status).toBe(200);
    const uid = targets.many.summary.uid;
    const inTruth = emulator()
      .truth("a")
      .keys.campaign_sending_domains.filter((key) => key.startsWith(`${uid}|`))
      .sort();
    expect(inTruth).toEqual(domains.map((id) => `${uid}|${id}`).sort());
  });

  it("form arrays may also come as repeated keys", async () => {
    const data = validFor("many");
    const fields = Object.entries({ ...data, skip_days: undefined })
      .filter(([, value]) => value !== undefined && !Array.isArray(value))
      .map(([key, value]): [string, string] => [`update_data[${key}]`, String(value)]);
    const domains = domainsOfWorkspace(seed, targets.many.campaign.workspace_id).slice(0, 2);
    fields.push(["update_data[skip_days]", "Monday"], ["update_data[skip_days]", "Friday"], ["update_data[skip_days]", "Monday"]);
    for (const id of domains) fields.push(["update_data[sending_domains]", String(id)]);
    const answer = await api.send("PATCH", PATHS.campaign, { kind: "form", fields: [["campaign_uid", targets.many.summary.uid], ...fields] });
    expect(answer.status, answer.text.slice(0, 200)).toBe(200);
    const settings = parseStrict(resources.campaign, answer.json, "campaign").settings;
    expect(settings.skip_days).toEqual(["Monday", "Friday"]);
    expect(settings.sending_domains).toEqual(domains);
  });

  it.each(["creating", "scheduled", "running", "paused", "complete", "cancelled", "failed"] as const)(
    "a campaign in %s answers 409 naming its state and the one required",
    async (status) => {
      const target = campaignWithStatus(seed, status);
      const data = validUpdateData(sequenceCountOf(target), domainsOfWorkspace(seed, target.campaign.workspace_id).slice(0, 1));
      const answer = await patch("json", { campaign_uid: target.summary.uid, update_data: data });
      expect(answer.status).toBe(409);
      const message = messageOf(answer);
      expect(message).toContain(`campaign is ${status};`);
      expect(message).toMatch(/allowed only in state created$/);
    },
  );
});

describe("strategy follows the live number of sequences", () => {
  it("adding a sequence to an empty campaign makes single-message valid and sequential invalid; deleting it reverts", async () => {
    const uid = targets.none.summary.uid;
    const created = await api.send("POST", PATHS.emailSequence, {
      kind: "json",
      value: { campaign_uid: uid, sequence_data: { order: 1, subject: "Hello", body: "Hi" } },
    });
    expect(created.status).toBe(200);
    const id = parseStrict(resources.emailSequence, created.json, "sequence").id;
    try {
      expect((await update("json", "none", set("scheduling_strategy", "single-message"))).status).toBe(200);
      expect((await update("json", "none", set("scheduling_strategy", "sequential"))).status).toBe(400);
    } finally {
      expect((await api.request("DELETE", PATHS.emailSequence, { query: { id } })).status).toBe(200);
    }
    expect((await update("json", "none", set("scheduling_strategy", "single-message"))).status).toBe(400);
  });
});

describe("update campaign (#3): every violated rule is named", () => {
  // Contract A.5: "Every violated rule is a 400 naming the field"; src/emulator/README.md: the 400 names
  // "every violated rule, `path: reason`, joined by `; `". The window rule of spec 4.3 ("from_time and
  // to_time must be at least 3 hours apart") concerns two fields that are both valid here.
  it.each([
    ["daily_email_limit a string", { daily_email_limit: "50" }, "update_data.daily_email_limit"],
    ["single_subject missing", { single_subject: undefined }, "update_data.single_subject"],
    ["skip_days with an unknown day", { skip_days: ["Funday"] }, "update_data.skip_days"],
  ])("a body with %s and a 1-hour window names both fields", async (_label, change, field) => {
    const data = createdCampaign(seed, (n) => n >= 2);
    const updateData = { ...validUpdateData(sequenceCountOf(data), domainsOfWorkspace(seed, data.campaign.workspace_id)), from_time: "09:00:00", to_time: "10:00:00", ...change };
    const answer = await api.send("PATCH", PATHS.campaign, { kind: "json", value: { campaign_uid: data.campaign.uid, update_data: updateData } });
    expect(answer.status, answer.text).toBe(400);
    const message = messageOf(answer);
    expect(message).toContain(field);
    expect(message).toMatch(/update_data\.(from_time|to_time)/);
  });
});
