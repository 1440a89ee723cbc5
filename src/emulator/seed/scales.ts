import type { SeedScale } from "../options.ts";

/** How much data one account gets at each scale. Ranges are [min, max], both included. */
export interface ScaleProfile {
  workspaces: [number, number];
  campaigns: [number, number];
  leadsPerCampaign: [number, number];
  domainsPerWorkspace: [number, number];
  contactListsPerWorkspace: [number, number];
}

export const SCALES: Record<SeedScale, ScaleProfile> = {
  small: { workspaces: [2, 3], campaigns: [12, 20], leadsPerCampaign: [40, 80], domainsPerWorkspace: [3, 4], contactListsPerWorkspace: [2, 3] },
  // ~30 campaigns of ~670 leads: about 20,000 leads per account.
  medium: { workspaces: [3, 3], campaigns: [30, 30], leadsPerCampaign: [600, 733], domainsPerWorkspace: [3, 5], contactListsPerWorkspace: [3, 5] },
  // 110 campaigns of at least 1,850 leads: at least 203,500 leads per account.
  large: { workspaces: [4, 4], campaigns: [110, 110], leadsPerCampaign: [1_850, 2_300], domainsPerWorkspace: [4, 6], contactListsPerWorkspace: [4, 6] },
};
