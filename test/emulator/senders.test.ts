import { beforeAll, describe, expect, it } from "vitest";
import { PATHS } from "../../src/upstream/endpoints.ts";
import * as resources from "../../src/upstream/resources.ts";
import { Api, createdCampaign, messageOf, sequenceCountOf, snapshotAccount, useEmulator, validUpdateData, type AccountSnapshot } from "../support/emulator.ts";

/**
 * A lead's sender_email_address is a mailbox on one of its campaign's sending_domains (settings 2.3),
 * also when those domains belong to another workspace of the account, which update campaign accepts.
 */

const emulator = useEmulator({ apiKeys: ["a"], seed: 13 });
let api: Api;
let seed: AccountSnapshot;

beforeAll(async () => {
  api = new Api(emulator().url, "a");
  seed = await snapshotAccount(api);
});

function domainOf(address: string): string {
  return address.slice(address.lastIndexOf("@") + 1);
}

function domainNames(snapshot: AccountSnapshot, ids: readonly number[]): string[] {
  return snapshot.domains.filter((domain) => ids.includes(domain.id)).map((domain) => domain.domain);
}

describe("senders", () => {
  it("in the generated data, every lead of a campaign that names sending domains sends from one of them", () => {
    let checked = 0;
    for (const { campaign, leads } of seed.campaigns) {
      const names = domainNames(seed, campaign.settings.sending_domains);
      if (names.length === 0) continue;
      for (const lead of leads) expect(names, `${campaign.uid} ${lead.uid}`).toContain(domainOf(lead.sender_email_address));
      checked += leads.length;
    }
    expect(checked).toBeGreaterThan(0);
  });

  it("after an update to a sending domain of another workspace, the campaign's leads, present and joining, send from it", async () => {
    const target = createdCampaign(seed, (sequences) => sequences >= 2);
    const foreign = seed.domains.find((domain) => domain.workspace_id !== target.campaign.workspace_id && domain.status === "active");
    if (!foreign) throw new Error("the seed has no active domain in another workspace");
    const uid = target.summary.uid;
    const answer = await api.send("PATCH", PATHS.campaign, { kind: "json", value: { campaign_uid: uid, update_data: validUpdateData(sequenceCountOf(target), [foreign.id]) } });
    expect(answer.status, answer.text.slice(0, 300)).toBe(200);

    const present = await api.walk(PATHS.leads, { campaign_uid: uid }, resources.lead);
    expect(present.total).toBeGreaterThan(0);
    for (const lead of present.records) expect(domainOf(lead.sender_email_address), lead.uid).toBe(foreign.domain);

    const started = await api.send("POST", PATHS.campaignStart, { kind: "json", value: { campaign_uid: uid } });
    expect(started.status, messageOf(started)).toBe(200);
    emulator().advance(5 * 86_400);
    const after = await api.walk(PATHS.leads, { campaign_uid: uid }, resources.lead);
    const known = new Set(present.records.map((lead) => lead.uid));
    const joined = after.records.filter((lead) => !known.has(lead.uid));
    expect(joined.length).toBeGreaterThan(0);
    for (const lead of after.records) expect(domainOf(lead.sender_email_address), lead.uid).toBe(foreign.domain);
  });
});
