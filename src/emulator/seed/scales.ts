import type { DayName } from "../../upstream/enums.ts";
import type { SeedScale } from "../options.ts";
import type { CampaignKind } from "./campaigns.ts";

/** How much data one account gets at each scale. Ranges are [min, max], both included. */
export interface ScaleProfile {
  workspaces: [number, number];
  campaigns: [number, number];
  leadsPerCampaign: [number, number];
  domainsPerWorkspace: [number, number];
  contactListsPerWorkspace: [number, number];
  /** Weights of the campaign kinds drawn after the required ones (one of each kind); the generator's default mix when absent. */
  extraKinds?: Partial<Record<CampaignKind, number>>;
  /**
   * How campaigns that already ran send (all but `created`/`creating` ones, whose settings pass the update
   * rules): their daily window and their range of daily_email_limit. The generator's variety when absent.
   */
  sending?: SendingProfile;
}

/** Sending of campaigns that already ran: daily window, range of daily_email_limit, days skipped. */
export interface SendingProfile {
  window: [string, string];
  dailyEmailLimit: [number, number];
  skipDays: DayName[];
  /** Range of next_message_days between two steps of their email sequences. */
  nextMessageDays: [number, number];
}

export const SCALES: Record<SeedScale, ScaleProfile> = {
  small: { workspaces: [2, 3], campaigns: [12, 20], leadsPerCampaign: [40, 80], domainsPerWorkspace: [3, 4], contactListsPerWorkspace: [2, 3] },
  // ~30 campaigns of ~670 leads: about 20,000 leads per account.
  medium: { workspaces: [3, 3], campaigns: [30, 30], leadsPerCampaign: [600, 733], domainsPerWorkspace: [3, 5], contactListsPerWorkspace: [3, 5] },
  // For freshness benchmarks (src/emulator/README.md, "Data"): 40 campaigns, 31 of them running (every
  // extra one), of 50-150 leads each, so a backfill is a few hundred requests; running campaigns send every
  // day around the clock, 40-80 emails a day, with 0-1 days between steps, so that in wall-clock mode
  // sends, opens, clicks and replies keep arriving across the account (about 1.5 events a minute).
  busy: {
    workspaces: [3, 3],
    campaigns: [40, 40],
    leadsPerCampaign: [50, 150],
    domainsPerWorkspace: [3, 4],
    contactListsPerWorkspace: [2, 3],
    extraKinds: { running: 1 },
    sending: { window: ["00:00:00", "23:59:59"], dailyEmailLimit: [80, 160], skipDays: [], nextMessageDays: [0, 1] },
  },
  // 110 campaigns of at least 1,850 leads: at least 203,500 leads per account.
  large: { workspaces: [4, 4], campaigns: [110, 110], leadsPerCampaign: [1_850, 2_300], domainsPerWorkspace: [4, 6], contactListsPerWorkspace: [4, 6] },
};
