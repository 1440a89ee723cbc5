import { beforeAll, describe, expect, it } from "vitest";
import { Api, snapshotAccount, useEmulator, type AccountSnapshot } from "../support/emulator.ts";

/**
 * src/emulator/README.md ("HTTP behaviour"): "A lead's `sender_email_address` is a mailbox on
 * one of its campaign's sending domains, whichever workspace holds them (on any domain of the
 * campaign's workspace when it names none)". The seed has one domain already being deleted, which
 * "vanishes on the first advance of an hour or more" (README, Data).
 */

const emulator = useEmulator({ apiKeys: ["a"], seed: 7 });
let api: Api;

beforeAll(() => {
  api = new Api(emulator().url, "a");
});

function offenders(snapshot: AccountSnapshot): string[] {
  const found: string[] = [];
  for (const { campaign, leads } of snapshot.campaigns) {
    // Only campaigns that will still send: their leads' future emails go out from these mailboxes.
    if (!["created", "scheduled", "running", "paused"].includes(campaign.status)) continue;
    const allowed = campaign.settings.sending_domains.length > 0
      ? snapshot.domains.filter((domain) => campaign.settings.sending_domains.includes(domain.id))
      : snapshot.domains.filter((domain) => domain.workspace_id === campaign.workspace_id);
    const names = new Set(allowed.map((domain) => domain.domain));
    for (const lead of leads) {
      const domain = lead.sender_email_address.slice(lead.sender_email_address.lastIndexOf("@") + 1);
      if (!names.has(domain)) found.push(`${campaign.uid.slice(0, 11)} (${campaign.status}, sending_domains ${JSON.stringify(campaign.settings.sending_domains)}) lead ${lead.uid}: ${lead.sender_email_address}`);
    }
  }
  return found;
}

describe("sender mailboxes follow the domains that exist", () => {
  it("holds in the generated data", async () => {
    expect(offenders(await snapshotAccount(api))).toEqual([]);
  });

  it("still holds, for campaigns that will still send, after the domain being deleted has vanished (advance of two hours)", async () => {
    emulator().advance(2 * 3600);
    const snapshot = await snapshotAccount(api);
    const found = offenders(snapshot);
    expect(found.slice(0, 5), `${found.length} leads send from a domain that is not (any longer) one of the account's`).toEqual([]);
  });
});
