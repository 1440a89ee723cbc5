import type { CampaignStatus, SchedulingStrategy } from "../../upstream/enums.ts";
import { DAY_MS, HOUR_MS, MINUTE_MS } from "../durations.ts";
import { campaignSenders, createContact } from "../people.ts";
import { planSchedules } from "../planning.ts";
import type { Random } from "../random.ts";
import type { CampaignRecord, ContactRecord, WorkspaceRecord } from "../store/model.ts";
import { addLead, campaignCollections } from "../store/records.ts";
import type { Account, World } from "../store/world.ts";
import type { HistoryPlay } from "./history.ts";
import type { ScaleProfile } from "./scales.ts";
import { seedSequences } from "./sequences.ts";
import { campaignSettings } from "./settings.ts";

/**
 * Generated campaigns. Every account gets one campaign of each kind below
 * (so every status appears, and `created` with 0, 1 and several sequences),
 * then more of the common kinds. A campaign's timeline is chosen from how
 * long its leads take to send, and its past is then played forward to now.
 */

export type CampaignKind =
  | "creating"
  | "created-empty"
  | "created-single"
  | "created-multi"
  | "scheduled"
  | "running"
  | "paused"
  | "complete"
  | "cancelled"
  | "failed";

/** Campaigns whose sequences a client can discover come first, so the sequences that must cover every label and content type do. */
const REQUIRED_KINDS: readonly CampaignKind[] = [
  "created-multi",
  "created-single",
  "running",
  "complete",
  "created-empty",
  "scheduled",
  "paused",
  "cancelled",
  "failed",
  "creating",
];

const EXTRA_KIND_WEIGHTS: Partial<Record<CampaignKind, number>> = {
  running: 3,
  complete: 3,
  paused: 1,
  cancelled: 1,
  "created-multi": 1,
  scheduled: 0.5,
  failed: 0.5,
};

const RUN_STRATEGIES: readonly SchedulingStrategy[] = ["testing", "sequential", "no-followup-limit", "smart-queue", "single-message"];
const MULTI_STRATEGIES: readonly SchedulingStrategy[] = ["sequential", "no-followup-limit", "smart-queue"];

export function campaignKinds(random: Random, count: number, extraWeights: Partial<Record<CampaignKind, number>> = EXTRA_KIND_WEIGHTS): CampaignKind[] {
  const kinds = [...REQUIRED_KINDS];
  while (kinds.length < count) kinds.push(random.weighted(extraWeights as Record<CampaignKind, number>));
  return kinds;
}

const STATUS_OF_KIND: Record<CampaignKind, CampaignStatus> = {
  creating: "creating",
  "created-empty": "created",
  "created-single": "created",
  "created-multi": "created",
  scheduled: "scheduled",
  running: "running",
  paused: "paused",
  complete: "complete",
  cancelled: "cancelled",
  failed: "failed",
};

function strategyAndSteps(random: Random, kind: CampaignKind, position: number): [SchedulingStrategy, number] {
  switch (kind) {
    case "created-empty":
      return [random.pick(MULTI_STRATEGIES), 0];
    case "created-single":
      return ["single-message", 1];
    case "created-multi":
      return [random.pick(MULTI_STRATEGIES), random.int(2, 4)];
    case "creating":
      return random.chance(0.5) ? ["single-message", 1] : [random.pick(MULTI_STRATEGIES), random.int(2, 3)];
    default: {
      const strategy = RUN_STRATEGIES[position % RUN_STRATEGIES.length] as SchedulingStrategy;
      return [strategy, strategy === "single-message" ? 1 : random.int(strategy === "testing" ? 1 : 2, 4)];
    }
  }
}

/**
 * The spec allows uids of up to 255 characters, so every account has campaigns whose uid is exactly that
 * long: the required `running` one (with the first of its leads: leads, events, lifecycle) and the
 * required `created-multi` one (updates and sequence writes). Their position among the required kinds.
 */
const LONG_UID_POSITIONS: ReadonlySet<number> = new Set(["created-multi", "running"].map((kind) => REQUIRED_KINDS.indexOf(kind as CampaignKind)));

/** `history` gains the campaign's past, which the account's campaigns play together once all are generated (history.ts). */
export function seedCampaign(
  world: World,
  account: Account,
  workspace: WorkspaceRecord,
  random: Random,
  profile: ScaleProfile,
  kind: CampaignKind,
  position: number,
  history: HistoryPlay[],
): CampaignRecord {
  const [strategy, steps] = strategyAndSteps(random, kind, position);
  const leads = random.int(...profile.leadsPerCampaign);
  const serial = world.ids.take("campaign");
  // A list still importing was uploaded minutes ago (seed/workspaces.ts): after every generated campaign.
  const lists = workspace.contactLists.items.filter((list) => list.status !== "processing");
  const longUid = LONG_UID_POSITIONS.has(position) && REQUIRED_KINDS[position] === kind;
  const campaign: CampaignRecord = {
    serial,
    uid: world.uids.encode("campaign", serial, longUid),
    workspace,
    createdOn: world.now,
    scheduledStart: null,
    // Campaigns in creating become created: both carry settings the update rules accept.
    settings: campaignSettings(random, { position, editable: kind.startsWith("creat"), strategy, leads, domains: workspace.domains.items, sending: profile.sending }),
    status: STATUS_OF_KIND[kind],
    bounces: 0,
    paused: false,
    pausedOn: null,
    generatingSchedules: kind === "creating",
    deletingSchedules: false,
    archived: false,
    bounceBlocked: false,
    startedRunningAt: null,
    completedAt: null,
    cancelledAt: null,
    contactLists: lists.length === 0 ? [] : random.sample(lists, random.int(1, Math.min(2, lists.length))),
    sequences: [],
    ...campaignCollections(),
    sendQueue: null,
    sendQueueHead: 0,
  };
  account.campaigns.push(campaign);
  workspace.campaigns.push(campaign);
  account.campaignsByUid.set(campaign.uid, campaign);
  seedSequences(world, account, campaign, random, steps, kind.startsWith("creat") ? undefined : profile.sending?.nextMessageDays);
  const senders = campaignSenders(account, campaign);
  for (const contact of contactsFor(world, workspace, random, leads)) addLead(world, account, campaign, contact, random.pick(senders), kind !== "creating");
  const firstLead = campaign.leads.items[0];
  if (longUid && kind === "running" && firstLead) world.longUidLeads.add(firstLead.id);
  const past = setTimeline(world, campaign, random, kind);
  if (past !== undefined) history.push({ campaign, ...past });
  return campaign;
}

/** Distinct contacts for one campaign: some already known to the workspace (shared with other campaigns), the rest new. */
function contactsFor(world: World, workspace: WorkspaceRecord, random: Random, count: number): ContactRecord[] {
  const known = workspace.contacts;
  const reused = Math.min(known.length, Math.floor(count * (0.1 + random.next() * 0.2)));
  const start = random.int(0, Math.max(0, known.length - reused));
  const contacts = known.slice(start, start + reused);
  while (contacts.length < count) contacts.push(createContact(world, workspace, random));
  return contacts;
}

function between(random: Random, low: number, high: number): number {
  return Math.floor(low + random.next() * (high - low));
}

/** The campaign's dates, and the part of its plan that is past: what was sent by then, and what became of the rest. */
function setTimeline(world: World, campaign: CampaignRecord, random: Random, kind: CampaignKind): Omit<HistoryPlay, "campaign"> | undefined {
  const now = world.now;
  const leads = campaign.leads.items;
  switch (kind) {
    case "creating":
      campaign.createdOn = now - between(random, MINUTE_MS, 9 * MINUTE_MS);
      return undefined;
    case "created-empty":
    case "created-single":
    case "created-multi":
      campaign.createdOn = now - between(random, HOUR_MS, 20 * DAY_MS);
      planSchedules(campaign, leads, now + DAY_MS);
      return undefined;
    case "scheduled": {
      const start = now + between(random, 2 * HOUR_MS, 7 * DAY_MS);
      campaign.createdOn = now - between(random, HOUR_MS, 10 * DAY_MS);
      campaign.scheduledStart = start;
      planSchedules(campaign, leads, start);
      return undefined;
    }
    case "running":
    case "paused":
    case "failed": {
      const start = now - Math.max(measureSpan(campaign, now) * (0.2 + random.next() * 0.5), DAY_MS);
      run(campaign, random, start);
      if (kind === "running") return { cutoff: now, unsent: "created" };
      const stop = between(random, start + (now - start) * 0.3, start + (now - start) * 0.95);
      if (kind === "paused") {
        campaign.paused = true;
        campaign.pausedOn = stop;
        return { cutoff: stop, unsent: "created" };
      }
      campaign.bounceBlocked = true;
      return { cutoff: stop, unsent: "cancelled" };
    }
    case "complete": {
      let start = now - measureSpan(campaign, now) - between(random, 8 * DAY_MS, 30 * DAY_MS);
      run(campaign, random, start);
      while (leads.some((lead) => lead.schedules.some((schedule) => schedule.at > now))) {
        start -= 7 * DAY_MS;
        run(campaign, random, start);
      }
      campaign.archived = random.chance(0.4);
      return { cutoff: now, unsent: "created" };
    }
    case "cancelled": {
      campaign.archived = random.chance(0.3);
      campaign.deletingSchedules = random.chance(0.2);
      if (campaign.serial % 3 === 0) {
        campaign.createdOn = now - between(random, 2 * DAY_MS, 40 * DAY_MS);
        planSchedules(campaign, leads, campaign.createdOn + DAY_MS);
        campaign.cancelledAt = between(random, campaign.createdOn + HOUR_MS, now);
        return { cutoff: campaign.createdOn, unsent: "cancelled" };
      }
      const start = now - Math.max(measureSpan(campaign, now) * (0.3 + random.next() * 0.5), DAY_MS);
      run(campaign, random, start);
      campaign.cancelledAt = between(random, start + (now - start) * 0.3, start + (now - start) * 0.9);
      return { cutoff: campaign.cancelledAt, unsent: "cancelled" };
    }
  }
}

/** How long sending every lead would take from `start` (plans the schedules; a later plan overwrites them). */
function measureSpan(campaign: CampaignRecord, start: number): number {
  planSchedules(campaign, campaign.leads.items, start);
  let last = start;
  for (const lead of campaign.leads.items) for (const schedule of lead.schedules) last = Math.max(last, schedule.at);
  return last - start;
}

function run(campaign: CampaignRecord, random: Random, start: number): void {
  campaign.createdOn = start - between(random, HOUR_MS, 5 * DAY_MS);
  campaign.startedRunningAt = start;
  planSchedules(campaign, campaign.leads.items, start);
}
