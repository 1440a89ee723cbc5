import { Random, hash32 } from "../random.ts";
import { Collection } from "./collection.ts";
import { IdCounters, UidCodec } from "./ids.ts";
import { Lister } from "./listing.ts";
import type {
  CampaignRecord,
  ContactListRecord,
  DomainRecord,
  LeadRecord,
  PendingEvent,
  SequenceRecord,
  WorkspaceRecord,
} from "./model.ts";

/** The simulated clock starts here, so every run of one seed prints the same dates. */
const SIMULATED_START = Date.parse("2026-06-01T00:00:00.000Z");

/** Everything one API key can see. */
export interface Account {
  index: number;
  workspaces: Collection<WorkspaceRecord>;
  domains: Collection<DomainRecord>;
  contactLists: Collection<ContactListRecord>;
  campaigns: Collection<CampaignRecord>;
  campaignsByUid: Map<string, CampaignRecord>;
  leadsById: Map<number, LeadRecord>;
  sequencesById: Map<number, SequenceRecord>;
  /** Activity planned for later, delivered by the simulation as the clock passes it. */
  pending: PendingEvent[];
  /** Draws of the simulation for this account. */
  random: Random;
}

/** All accounts of one emulator, its clock and its identifier sources. */
export class World {
  now = SIMULATED_START;
  readonly ids = new IdCounters();
  readonly uids: UidCodec;
  readonly lister: Lister;
  readonly accounts = new Map<string, Account>();
  /** Leads whose uid takes the long form (UID_MAX_LENGTH characters); every other lead's is short. */
  readonly longUidLeads = new Set<number>();

  constructor(readonly seed: number) {
    this.uids = new UidCodec(seed);
    this.lister = new Lister(hash32(seed, 0x5_4f_ff));
  }

  createAccount(apiKey: string): Account {
    const index = this.accounts.size;
    const account: Account = {
      index,
      workspaces: new Collection((workspace) => workspace.id),
      domains: new Collection((domain) => domain.id),
      contactLists: new Collection((list) => list.serial),
      campaigns: new Collection((campaign) => campaign.serial),
      campaignsByUid: new Map(),
      leadsById: new Map(),
      sequencesById: new Map(),
      pending: [],
      random: new Random(hash32(this.seed, index, 0x51_3a)),
    };
    this.accounts.set(apiKey, account);
    return account;
  }

  /** The lead with this uid, in the form the lead uses (a long uid's short form names no lead, and vice versa). */
  findLead(account: Account, uid: string): LeadRecord | undefined {
    const id = this.uids.decode("lead", uid);
    const lead = id === undefined ? undefined : account.leadsById.get(id);
    return lead !== undefined && this.leadUid(lead) === uid ? lead : undefined;
  }

  leadUid(lead: LeadRecord): string {
    return this.uids.encode("lead", lead.id, this.longUidLeads.has(lead.id));
  }
}
