import { seedWorld } from "../../../src/emulator/seed/generate.ts";
import type { SeedScale } from "../../../src/emulator/options.ts";
import type { CampaignRecord, ScheduleRecord } from "../../../src/emulator/store/model.ts";
import { World, type Account } from "../../../src/emulator/store/world.ts";

/** Helpers for the emulator's unit tests: a seeded world without a server. */

export function seeded(seed: number, keys: string[] = ["a"], scale: SeedScale = "small"): World {
  const world = new World(seed);
  seedWorld(world, keys, scale);
  return world;
}

export function accountOf(world: World, key = "a"): Account {
  const account = world.accounts.get(key);
  if (!account) throw new Error(`no account ${key}`);
  return account;
}

export function schedulesOf(campaign: CampaignRecord): ScheduleRecord[] {
  return campaign.leads.items.flatMap((lead) => lead.schedules);
}

export function allSchedules(account: Account): ScheduleRecord[] {
  return account.campaigns.items.flatMap(schedulesOf);
}

export function campaignIn(account: Account, status: CampaignRecord["status"], accepts: (campaign: CampaignRecord) => boolean = () => true): CampaignRecord {
  const campaign = account.campaigns.items.find((candidate) => candidate.status === status && accepts(candidate));
  if (!campaign) throw new Error(`no ${status} campaign`);
  return campaign;
}
