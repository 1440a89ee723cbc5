import type { DayName, SchedulingStrategy } from "../../upstream/enums.ts";
import type { CampaignSettings } from "../../upstream/resources.ts";
import type { Random } from "../random.ts";
import type { DomainRecord } from "../store/model.ts";
import type { SendingProfile } from "./scales.ts";
import { CAMPAIGN_NAMES, TIME_ZONES } from "./vocabulary.ts";

/**
 * Settings of generated campaigns. Campaigns in `created` always get settings
 * that pass the update rules (so a client can fetch, edit and send them back);
 * campaigns that already ran may carry what only the read side allows: nulls,
 * the `testing` strategy.
 */

const MAX_NAME_LENGTH = 300;
const SENDING_WINDOWS: readonly [string, string][] = [
  ["08:00:00", "17:00:00"],
  ["09:30:00", "18:00:00"],
  ["07:00:00", "11:00:00"],
  ["13:00:00", "20:30:00"],
];
/** Skip-day sets for campaigns in `created`; together they name every day. */
const CREATED_SKIP_DAYS: readonly DayName[][] = [
  ["Monday", "Tuesday", "Thursday", "Friday", "Saturday", "Sunday"],
  ["Wednesday"],
  ["Saturday", "Sunday"],
];
const RUN_SKIP_DAYS: readonly DayName[][] = [[], ["Saturday", "Sunday"], ["Sunday"], ["Friday", "Saturday", "Sunday"]];

interface SettingsChoice {
  /** Position of the campaign in its account, to spread fixed variants over campaigns. */
  position: number;
  editable: boolean;
  strategy: SchedulingStrategy;
  leads: number;
  domains: readonly DomainRecord[];
  /** The scale's sending window and daily limits for campaigns that already ran (ScaleProfile.sending). */
  sending?: SendingProfile;
}

function campaignName(random: Random, position: number): string {
  const base = `${CAMPAIGN_NAMES[position % CAMPAIGN_NAMES.length] as string} ${random.int(1, 99)}`;
  // One campaign per account has a name of exactly the maximum length.
  if (position !== 4) return base;
  return `${base} — ${"long name ".repeat(40)}`.slice(0, MAX_NAME_LENGTH);
}

export function campaignSettings(random: Random, choice: SettingsChoice): CampaignSettings {
  const { position, editable } = choice;
  const nullable = !editable && position % 4 === 1;
  const sending = editable ? undefined : choice.sending;
  const [fromTime, toTime] = sending?.window ?? (SENDING_WINDOWS[position % SENDING_WINDOWS.length] as [string, string]);
  // The first campaign of an account uses a custom unsubscribe link, the second the automatic one.
  const addUnsubLink = position === 0 || random.chance(0.7);
  const custom = position === 0 || (position !== 1 && addUnsubLink && random.chance(0.3));
  // Domains still being set up were added minutes ago (seed/workspaces.ts): no generated campaign, sent or not, has them.
  const sendingDomains = choice.domains.filter((domain) => domain.status === "active");
  // Whole campaigns must fit in a few weeks of sending, whatever the seed's scale.
  const minimumDaily = Math.min(100, Math.max(10, Math.ceil(choice.leads / 25)));
  return {
    name: campaignName(random, position),
    reply_to_address: position % 3 === 0 ? null : `replies@${choice.domains[0]?.domain ?? "example.com"}`,
    daily_email_limit: sending ? random.int(...sending.dailyEmailLimit) : random.int(minimumDaily, 100),
    skip_days: editable
      ? [...(CREATED_SKIP_DAYS[position % CREATED_SKIP_DAYS.length] as DayName[])]
      : [...(sending?.skipDays ?? (RUN_SKIP_DAYS[position % RUN_SKIP_DAYS.length] as DayName[]))],
    single_subject: random.chance(0.5),
    scheduling_strategy: choice.strategy,
    from_time: nullable && !sending ? null : fromTime,
    to_time: nullable && !sending ? null : toTime,
    time_zone: nullable ? null : random.pick(TIME_ZONES),
    add_unsub_link: addUnsubLink,
    unsub_link_type: custom ? "custom" : "auto",
    custom_unsub_text: custom ? "Plus d'e-mails ? Désinscrivez-vous ici ✋" : "",
    click_tracking_enabled: random.chance(0.75),
    open_tracking_enabled: random.chance(0.85),
    skip_dangerous_emails: random.chance(0.5),
    skip_disposable_emails: random.chance(0.5),
    skip_catchall_emails: random.chance(0.5),
    skip_full_inbox_emails: random.chance(0.5),
    skip_invalid_emails: random.chance(0.8),
    forward_negative_emails: random.chance(0.3),
    forward_netural_emails: random.chance(0.3),
    sending_domains: random.sample(sendingDomains, random.int(0, 2)).map((domain) => domain.id),
  };
}
