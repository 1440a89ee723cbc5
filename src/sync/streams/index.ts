import type { StreamDefinition } from "../stream.ts";
import { campaignDetail } from "./campaign-detail.ts";
import { campaigns } from "./campaigns.ts";
import { contactLists } from "./contact-lists.ts";
import { domains } from "./domains.ts";
import { emailOpens } from "./email-opens.ts";
import { emailSequences } from "./email-sequences.ts";
import { LEAD_REFRESH, leads, leadsByUid } from "./leads.ts";
import { linkClicks } from "./link-clicks.ts";
import { replies } from "./replies.ts";
import { workspaces } from "./workspaces.ts";

/** Account discovery, in order: the campaign listing comes last so that its fan-out sees every workspace. */
export const ACCOUNT_STREAMS = [workspaces, domains, contactLists, campaigns] as StreamDefinition[];

/**
 * One campaign, in order: its detail first (the status decides how leads are
 * read), leads before the event listings, sequences last because their ids are
 * discovered in the leads' schedules.
 */
export const CAMPAIGN_STREAMS = [campaignDetail, leads, replies, linkClicks, emailOpens, emailSequences] as StreamDefinition[];

export { campaignDetail, campaigns, contactLists, domains, emailOpens, emailSequences, LEAD_REFRESH, leads, leadsByUid, linkClicks, replies, workspaces };
