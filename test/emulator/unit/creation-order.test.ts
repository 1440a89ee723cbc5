import { describe, expect, it } from "vitest";
import { arriveAccountRecord, arriveLateEvent, arriveLead } from "../../../src/emulator/arrivals.ts";
import { Random } from "../../../src/emulator/random.ts";
import { advance } from "../../../src/emulator/simulate.ts";
import type { Collection } from "../../../src/emulator/store/collection.ts";
import type { Account } from "../../../src/emulator/store/world.ts";
import { accountOf, seeded } from "./world.ts";

/**
 * Contract A.3: `asc` listings follow creation. Every collection a listing pages over is kept in
 * (created_on, then id or serial) order, events in event-time order and leads in id order, through
 * seeding, arrivals and the simulation. Leads carry no created_on, so only this test can see theirs.
 */

function outOfOrder<T>(collection: Collection<T>, key: (record: T) => [number, number]): number {
  const items = collection.items;
  for (let index = 1; index < items.length; index++) {
    const [time, serial] = key(items[index] as T);
    const [previousTime, previousSerial] = key(items[index - 1] as T);
    if (time < previousTime || (time === previousTime && serial < previousSerial)) return index;
  }
  return -1;
}

function problems(account: Account): string[] {
  const found: string[] = [];
  const check = <T>(name: string, collection: Collection<T>, key: (record: T) => [number, number]) => {
    const at = outOfOrder(collection, key);
    if (at >= 0) found.push(`${name} at ${at}`);
  };
  check("workspaces", account.workspaces, (workspace) => [workspace.createdOn, workspace.id]);
  for (const holder of [account, ...account.workspaces.items]) {
    check("campaigns", holder.campaigns, (campaign) => [campaign.createdOn, campaign.serial]);
    check("domains", holder.domains, (domain) => [domain.createdOn, domain.id]);
    check("contact lists", holder.contactLists, (list) => [list.createdOn, list.serial]);
  }
  for (const campaign of account.campaigns.items) {
    check(`leads of ${campaign.uid}`, campaign.leads, (lead) => [lead.id, 0]);
    check(`replies of ${campaign.uid}`, campaign.replies, (reply) => [reply.receivedOn, 0]);
    check(`clicks of ${campaign.uid}`, campaign.clicks, (click) => [click.clickedOn, 0]);
    check(`opens of ${campaign.uid}`, campaign.opens, (open) => [open.openedOn, 0]);
  }
  return found;
}

describe("creation order of every listed collection", () => {
  it.each([1, 2, 3, 4])("seed %i: after seeding, arrivals and a simulated week", (seed) => {
    const world = seeded(seed);
    const account = accountOf(world);
    expect(problems(account)).toEqual([]);
    const random = new Random(seed);
    for (let round = 0; round < 10; round++) {
      for (const kind of ["campaign", "domain", "contactList"] as const) arriveAccountRecord(world, account, kind, random.pick(account.workspaces.items), random);
      const campaign = random.pick(account.campaigns.items);
      arriveLead(world, account, campaign, random);
      arriveLateEvent(world, campaign, "open", random);
      arriveLateEvent(world, campaign, "click", random);
      advance(world, 20_000);
    }
    expect(problems(account)).toEqual([]);
  });
});
