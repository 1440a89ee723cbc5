import { beforeAll, describe, expect, it } from "vitest";
import { Api, schedulesOf, snapshotAccount, useEmulator, type AccountSnapshot } from "../support/emulator.ts";

/**
 * The seeded world dated sending domains and contact lists after the
 * campaigns that use them. A domain created (status creating or
 * verifying) minutes before the simulated now is the mailbox domain of leads
 * whose emails were sent weeks earlier, and a campaign that completed long
 * ago selects a contact list uploaded minutes before now. Timestamps must
 * come in the order the events could happen.
 */

const emulator = useEmulator({ apiKeys: ["a"], seed: 7 });
let snapshot: AccountSnapshot;

beforeAll(async () => {
  snapshot = await snapshotAccount(new Api(emulator().url, "a"));
});

describe("chronology of domains and contact lists against the campaigns that use them", () => {
  it("no email is sent from a mailbox whose domain was created after the send", () => {
    const domains = new Map(snapshot.domains.map((domain) => [domain.domain, domain]));
    const violations: string[] = [];
    for (const data of snapshot.campaigns) {
      for (const lead of data.leads) {
        const domain = domains.get(lead.sender_email_address.split("@")[1] ?? "");
        if (!domain) continue;
        for (const schedule of lead.schedules) {
          if (schedule.sent_on !== null && Date.parse(schedule.sent_on) < Date.parse(domain.created_on)) {
            violations.push(`${data.campaign.uid} (${data.campaign.status}): schedule ${schedule.id} sent ${schedule.sent_on} from ${lead.sender_email_address}, domain ${domain.id} (${domain.status}) created ${domain.created_on}`);
          }
        }
      }
    }
    expect(violations.slice(0, 5)).toEqual([]);
  });

  it("no campaign that finished selects a contact list created after it finished", () => {
    const lists = new Map(snapshot.contactLists.map((list) => [list.uid, list]));
    const violations: string[] = [];
    for (const { campaign } of snapshot.campaigns) {
      const finished = campaign.completed_at ?? campaign.cancelled_at;
      if (finished === null) continue;
      for (const selected of campaign.selected_contact_lists as { uid: string }[]) {
        const list = lists.get(selected.uid);
        if (list && Date.parse(list.created_on) > Date.parse(finished)) {
          violations.push(`${campaign.uid} (${campaign.status}, finished ${finished}) selects ${list.uid} (${list.status}) created ${list.created_on}`);
        }
      }
    }
    expect(violations).toEqual([]);
  });

  it("no campaign names a sending domain or a contact list created after it, nor has leads on such a domain's mailboxes", () => {
    const domainsById = new Map(snapshot.domains.map((domain) => [domain.id, domain]));
    const domainsByName = new Map(snapshot.domains.map((domain) => [domain.domain, domain]));
    const lists = new Map(snapshot.contactLists.map((list) => [list.uid, list]));
    const violations: string[] = [];
    for (const { campaign, leads } of snapshot.campaigns) {
      const createdOn = Date.parse(campaign.created_on);
      const later = (what: string, record: { created_on: string } | undefined) => {
        if (record && Date.parse(record.created_on) > createdOn) violations.push(`${campaign.uid} (created ${campaign.created_on}): ${what} created ${record.created_on}`);
      };
      for (const id of campaign.settings.sending_domains) later(`domain ${id}`, domainsById.get(id));
      for (const selected of campaign.selected_contact_lists as { uid: string }[]) later(`list ${selected.uid}`, lists.get(selected.uid));
      for (const lead of leads) later(`sender ${lead.sender_email_address}`, domainsByName.get(lead.sender_email_address.split("@")[1] ?? ""));
    }
    expect(violations.slice(0, 5)).toEqual([]);
  });

  it("no schedule was sent before its campaign's sending domains existed", () => {
    const domains = new Map(snapshot.domains.map((domain) => [domain.id, domain]));
    const violations: string[] = [];
    for (const data of snapshot.campaigns) {
      const firstSend = Math.min(...schedulesOf(data.leads).flatMap((schedule) => (schedule.sent_on === null ? [] : [Date.parse(schedule.sent_on)])));
      if (!Number.isFinite(firstSend)) continue;
      for (const id of data.campaign.settings.sending_domains) {
        const domain = domains.get(id);
        if (domain && Date.parse(domain.created_on) > firstSend) {
          violations.push(`${data.campaign.uid} (${data.campaign.status}) first sent ${new Date(firstSend).toISOString()}, names domain ${id} (${domain.status}) created ${domain.created_on}`);
        }
      }
    }
    expect(violations).toEqual([]);
  });
});
