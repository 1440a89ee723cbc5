import { beforeAll, describe, expect, it } from "vitest";
import { PATHS } from "../../src/upstream/endpoints.ts";
import {
  Api,
  createdCampaign,
  domainsOfWorkspace,
  messageOf,
  schedulesOf,
  sequenceCountOf,
  snapshotAccount,
  useEmulator,
  validUpdateData,
  type AccountSnapshot,
  type Query,
} from "../support/emulator.ts";

/** Spec section 5 and contract A.2/A.6: one key is one account, and accounts never see each other. */

const emulator = useEmulator({ apiKeys: ["a", "b"], seed: 11 });
let a: Api;
let accountA: AccountSnapshot;
let accountB: AccountSnapshot;

beforeAll(async () => {
  a = new Api(emulator().url, "a");
  [accountA, accountB] = await Promise.all([snapshotAccount(a), snapshotAccount(new Api(emulator().url, "b"))]);
});

const everyEndpoint: [string, string, Query][] = [
  ["GET", PATHS.campaigns, {}],
  ["GET", PATHS.campaign, { campaign_uid: "x" }],
  ["PATCH", PATHS.campaign, {}],
  ["POST", PATHS.campaignStart, {}],
  ["POST", PATHS.campaignPause, {}],
  ["POST", PATHS.campaignResume, {}],
  ["POST", PATHS.campaignCancel, {}],
  ["POST", PATHS.emailSequence, {}],
  ["GET", PATHS.emailSequence, { id: 1 }],
  ["DELETE", PATHS.emailSequence, { id: 1 }],
  ["GET", PATHS.leads, { campaign_uid: "x" }],
  ["GET", PATHS.lead, { lead_uid: "x" }],
  ["GET", PATHS.replies, { campaign_uid: "x" }],
  ["GET", PATHS.linkClickEvents, { campaign_uid: "x" }],
  ["GET", PATHS.emailOpenEvents, { campaign_uid: "x" }],
  ["GET", PATHS.domains, {}],
  ["GET", PATHS.contacts, {}],
  ["GET", PATHS.workspaces, {}],
];

describe("API key", () => {
  it.each(everyEndpoint)("%s %s without X-Api-Key answers 401 {message}", async (method, path, query) => {
    const answer = await new Api(emulator().url).request(method, path, { query, body: method === "GET" ? undefined : { kind: "json", value: {} } });
    expect(answer.status).toBe(401);
    expect(messageOf(answer).length).toBeGreaterThan(0);
  });

  it.each(everyEndpoint)("%s %s with an unknown key answers 401 {message}", async (method, path, query) => {
    const answer = await new Api(emulator().url, "not-a-key").request(method, path, {
      query,
      body: method === "GET" ? undefined : { kind: "json", value: {} },
    });
    expect(answer.status).toBe(401);
    expect(messageOf(answer).length).toBeGreaterThan(0);
  });

  it("an empty X-Api-Key answers 401", async () => {
    const answer = await new Api(emulator().url, "").get(PATHS.campaigns);
    expect(answer.status).toBe(401);
    messageOf(answer);
  });

  it("the 401 message never echoes the key that was sent", async () => {
    const secret = "sk-live-very-secret-value";
    const answer = await new Api(emulator().url, secret).get(PATHS.campaigns);
    expect(answer.status).toBe(401);
    expect(answer.text).not.toContain(secret);
  });

  it("a key is matched exactly, not by prefix or case", async () => {
    expect((await new Api(emulator().url, "A").get(PATHS.campaigns)).status).toBe(401);
    expect((await new Api(emulator().url, "ab").get(PATHS.campaigns)).status).toBe(401);
  });
});

describe("isolation between accounts", () => {
  function foreign() {
    const campaign = accountB.campaigns.find((data) => data.leads.length > 0);
    const lead = campaign?.leads[0];
    const sequenceId = schedulesOf(campaign?.leads ?? [])[0]?.email_data.id;
    if (!campaign || !lead || sequenceId === undefined) throw new Error("account b has no campaign with leads and schedules");
    return { uid: campaign.summary.uid, leadUid: lead.uid, sequenceId };
  }

  it("every listing of account a is disjoint from account b's", () => {
    const ids = (snapshot: AccountSnapshot) => ({
      workspaces: snapshot.workspaces.map((w) => w.id),
      domains: snapshot.domains.map((d) => d.id),
      contactLists: snapshot.contactLists.map((c) => c.uid),
      campaigns: snapshot.campaigns.map((c) => c.summary.uid),
      leads: snapshot.campaigns.flatMap((c) => c.leads.map((l) => l.uid)),
      sequences: snapshot.sequences.map((s) => s.id),
      replies: snapshot.campaigns.flatMap((c) => c.replies.map((r) => r.id)),
    });
    const mine = ids(accountA);
    const theirs = ids(accountB);
    for (const key of Object.keys(mine) as (keyof typeof mine)[]) {
      const other = new Set<string | number>(theirs[key]);
      expect(mine[key].length, `account a has ${key}`).toBeGreaterThan(0);
      expect(
        mine[key].filter((id) => other.has(id)),
        key,
      ).toEqual([]);
    }
  });

  it("account a's records all belong to a's workspaces", () => {
    const workspaceIds = new Set(accountA.workspaces.map((w) => w.id));
    for (const domain of accountA.domains) expect(workspaceIds.has(domain.workspace_id)).toBe(true);
    for (const list of accountA.contactLists) expect(workspaceIds.has(list.workspace_id)).toBe(true);
    for (const { summary } of accountA.campaigns) expect(workspaceIds.has(summary.workspace_id)).toBe(true);
  });

  it("GET campaign/ with b's campaign uid answers 404", async () => {
    const answer = await a.get(PATHS.campaign, { campaign_uid: foreign().uid });
    expect(answer.status).toBe(404);
    messageOf(answer);
  });

  it("a's 404 for b's campaign is indistinguishable from an unknown uid", async () => {
    const theirs = await a.get(PATHS.campaign, { campaign_uid: foreign().uid });
    const unknown = await a.get(PATHS.campaign, { campaign_uid: "does-not-exist" });
    expect(theirs.status).toBe(unknown.status);
    expect(messageOf(theirs).replace(foreign().uid, "X")).toBe(messageOf(unknown).replace("does-not-exist", "X"));
  });

  it.each([PATHS.leads, PATHS.replies, PATHS.linkClickEvents, PATHS.emailOpenEvents])("GET %s with b's campaign uid answers 404", async (path) => {
    const answer = await a.get(path, { campaign_uid: foreign().uid, limit: 10, offset: 0 });
    expect(answer.status).toBe(404);
    messageOf(answer);
  });

  it("GET lead/ with b's lead uid answers 404", async () => {
    const answer = await a.get(PATHS.lead, { lead_uid: foreign().leadUid });
    expect(answer.status).toBe(404);
    messageOf(answer);
  });

  it("GET email-sequence/ with b's sequence id answers 404", async () => {
    const answer = await a.get(PATHS.emailSequence, { id: foreign().sequenceId });
    expect(answer.status).toBe(404);
    messageOf(answer);
  });

  it("DELETE email-sequence/ with b's sequence id answers 404 and leaves it in place", async () => {
    const answer = await a.request("DELETE", PATHS.emailSequence, { query: { id: foreign().sequenceId } });
    expect(answer.status).toBe(404);
    messageOf(answer);
    expect((await new Api(emulator().url, "b").get(PATHS.emailSequence, { id: foreign().sequenceId })).status).toBe(200);
  });

  it("PATCH campaign/ on b's created campaign answers 404", async () => {
    const target = createdCampaign(accountB);
    const update = validUpdateData(sequenceCountOf(target), domainsOfWorkspace(accountB, target.campaign.workspace_id).slice(0, 1));
    const answer = await a.send("PATCH", PATHS.campaign, { kind: "json", value: { campaign_uid: target.summary.uid, update_data: update } });
    expect(answer.status).toBe(404);
    messageOf(answer);
  });

  it("POST email-sequence/ on b's created campaign answers 404", async () => {
    const uid = createdCampaign(accountB).summary.uid;
    const answer = await a.send("POST", PATHS.emailSequence, {
      kind: "json",
      value: { campaign_uid: uid, sequence_data: { order: 1, subject: "s", body: "b" } },
    });
    expect(answer.status).toBe(404);
    messageOf(answer);
  });

  it.each([PATHS.campaignStart, PATHS.campaignPause, PATHS.campaignResume, PATHS.campaignCancel])(
    "POST %s on b's campaigns answers 404 whatever their state",
    async (path) => {
      for (const { summary } of accountB.campaigns) {
        const answer = await a.send("POST", path, { kind: "json", value: { campaign_uid: summary.uid } });
        expect(answer.status, `${summary.status} campaign`).toBe(404);
      }
    },
  );

  // Another account's workspace is answered exactly like one that does not exist (contract A.2: never reveal that it exists).
  it.each([PATHS.campaigns, PATHS.domains, PATHS.contacts])("GET %s?workspace_id= of b's workspace answers 404 like an unknown workspace", async (path) => {
    const workspaceId = accountB.workspaces[0]?.id;
    if (workspaceId === undefined) throw new Error("account b has no workspace");
    const unknownId = Math.max(...[...accountA.workspaces, ...accountB.workspaces].map((workspace) => workspace.id)) + 1;
    const [theirs, unknown] = await Promise.all([a.get(path, { workspace_id: workspaceId, limit: 100 }), a.get(path, { workspace_id: unknownId, limit: 100 })]);
    expect(theirs.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(messageOf(theirs)).toContain("workspace_id");
    expect(messageOf(theirs).replace(String(workspaceId), "X")).toBe(messageOf(unknown).replace(String(unknownId), "X"));
  });
});
